"""K-Precision: how much of the answer is in the context that reached the prompt; no judge.

Adlakha et al. 2023 ("Evaluating Correctness and Faithfulness of Instruction-Following Models
for Question Answering", TACL 2024; McGill-NLP/instruct-qa ``KPrecision``), the measure MTRAG's
Bert-KPrec builds on. Two forms:

- ``form='words'`` (default): the share of the answer's tokens found in the knowledge, as a
  multiset: K-Precision = sum_w min(count_answer(w), count_context(w)) / |answer tokens|, the
  tokens of SQuAD's normalisation (lower case, punctuation and the articles a/an/the removed,
  split on white space), the context's passages joined. ``stop_words='drop'`` leaves out common
  English function words on both sides first (the form the issue's 0.68 was measured with).
- ``form='tokens'``: BERTScore precision (Zhang et al. 2020, eq. 2, no idf, no rescaling) of the
  answer's contextual token vectors against every passage's, each passage encoded in windows of
  at most ``WINDOW_WORDS`` words (the embedder reads 256 word pieces at most):
  P = mean_i max_j x_i . y_j. With the bundled MiniLM, not MTRAG's model: values are not
  Bert-KPrec's.

Measured against people (the MTRAG development half, ``trust/mtrag/``: the 216 responses shown
passages, Spearman against the median human faithfulness rating; ``docs/offline-judge.md``):
words 0.659, words with ``stop_words='drop'`` 0.673, tokens (bundled MiniLM) 0.623; on the same
responses the benchmark's Bert-KPrec 0.593 and its RAGAS-style LLM judge ``rl_f`` 0.595.

>>> squad_tokens("The R2 has a 24-month warranty.")
['r2', 'has', '24month', 'warranty']
>>> words_k_precision("The R2 has a 24-month warranty.", ["R2 warranty: 24-month."]) == 3 / 4
True
>>> words_k_precision("The R2 has a 24-month warranty.", ["R2 warranty: 24-month."], drop_stop_words=True)
1.0
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragmeter.core.measure import Display, Measure, Param
from ragmeter.core.sample import Sample
from ragmeter.metrics.kinds import EmbeddingSpec, Unscorable
from ragmeter.metrics.spec_table import register

if TYPE_CHECKING:
    from ragmeter.embeddings.base import Embedder

WINDOW_WORDS = 120  # words per passage window for the token form (about 160 word pieces)
_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
STOP_WORDS = frozenset(
    "a an the this that these those it its is are was were be been being to of in on at by for with and or not no "
    "if then than from as up out per each every any all can may must will would should your you their they he she "
    "his her we our after before into over under about i me my do does did has have had so such which who whom "
    "what when where why how there here also other some more most only very just but".split())


def squad_tokens(text: str) -> list[str]:
    """SQuAD's answer normalisation, as instruct-qa applies it: lower case, punctuation removed,
    the articles a/an/the removed, split on white space."""
    return _ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split()


def words_k_precision(answer: str, passages: Sequence[str], *, drop_stop_words: bool = False) -> float | None:
    """The word form; None when the answer has no tokens."""
    said, known = squad_tokens(answer), squad_tokens(" ".join(passages))
    if drop_stop_words:
        said = [w for w in said if w not in STOP_WORDS]
        known = [w for w in known if w not in STOP_WORDS]
    if not said:
        return None
    return sum((Counter(said) & Counter(known)).values()) / len(said)


def windows(text: str, size: int = WINDOW_WORDS) -> list[str]:
    """``text`` cut into runs of at most ``size`` words."""
    words = text.split()
    return [" ".join(words[i:i + size]) for i in range(0, len(words), size)]


def tokens_k_precision(answer: str, passages: Sequence[str], embedder: Embedder) -> float | None:
    """The token form; None when the answer or the context gives no token vectors."""
    x = embedder.token_vectors(answer)
    ys = [embedder.token_vectors(w) for p in passages for w in windows(p)]
    ys = [y for y in ys if len(y)]
    if len(x) == 0 or not ys:
        return None
    return float(np.max(x @ np.vstack(ys).T, axis=1).mean())


def _texts(sample: Sample) -> tuple[str, list[str]]:
    if sample.answer is None or not sample.answer.strip():
        raise Unscorable("the sample has no answer")
    texts = {c.id: c.text for c in sample.retrieved}
    passages = [texts.get(cid) for cid in sample.context_ids]
    if not passages:
        raise Unscorable("the context is empty")
    if any(p is None for p in passages):
        raise Unscorable("a context chunk has no text")
    return sample.answer, [p for p in passages if p is not None]


def k_precision(sample: Sample, measure: Measure, embedder: Embedder) -> float:
    answer, passages = _texts(sample)
    if measure.params["form"] == "words":
        value = words_k_precision(answer, passages, drop_stop_words=measure.params["stop_words"] == "drop")
    else:
        if not embedder.has_tokens:
            raise Unscorable("the token form needs an embedder that gives token vectors")
        value = tokens_k_precision(answer, passages, embedder)
    if value is None:
        raise Unscorable("the answer has no tokens")
    return value


register(EmbeddingSpec(
    name="k_precision", version=1, family="embedding", display=Display("K-Prec", "K-Precision"), range=(0.0, 1.0),
    definition="share of the answer's tokens found in the context (words: multiset overlap of SQuAD-normalised "
               "tokens; tokens: greedy max-cosine of contextual token vectors, BERTScore precision)",
    source="Adlakha et al. 2023 (TACL 2024) K-Precision, McGill-NLP/instruct-qa; Zhang et al. 2020 (token form)",
    params={"form": Param(str, "words", choices=("words", "tokens"), doc="word overlap, or token vectors"),
            "stop_words": Param(str, "keep", choices=("keep", "drop"),
                                doc="words form: keep or leave out common function words")},
    undefined="the sample has no answer, no context, or the answer has no tokens",
    embedder_free=frozenset({("form", "words")}), compute=k_precision))
