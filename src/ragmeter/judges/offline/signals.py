"""The cheap evidence of the offline judge: how a claim lines up with one passage, no model call.

For a claim c and a passage p (``signals``):

- ``words``: the share of c's content words (lower-cased, stop words out, -s/-ed/-ing cut)
  found in p (the per-claim form of K-Precision, Adlakha et al. 2023);
- ``tokens``: BERTScore precision (Zhang et al. 2020, eq. 2, no idf) of c's contextual token
  vectors against p's (p read in windows the embedder can take), over c's content tokens:
  mean_i max_j x_i . y_j;
- ``sentence``: the cosine of c's sentence vector with p's closest sentence, the *aligned*
  sentence; ``aligned_words``: the share of c's content words found in that sentence;
- ``quantities``: c's amounts (digits or number words, with their unit: ``3-year`` = ``three
  years`` = 36 months, ``$1,299``, ``5 business days``, ``40%``; ``records.quantities``
  reads them) found in p (``found``), and those p contradicts (``conflict``: the aligned
  sentence states an amount of the same kind, none equal; for a bare number, a year or a count,
  only where that sentence holds half of the claim's words);
- ``names``: c's distinctive names (capitalised words not opening a sentence, letter-digit
  codes) missing from p;
- ``negation``: c and its aligned sentence disagree on a negation word (not, no, never, ...).

Passages are prepared once (:class:`Passage`) and reused for every claim and request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from ragmeter.judges.sentences import split_sentences
from ragmeter.records.quantities import read_quantity

WINDOW_WORDS = 120  # words per window of a passage's token vectors (the embedder reads 256 word pieces)
STOP = frozenset(
    "a an the this that these those it its is are was were be been being to of in on at by for with and or if then "
    "than from as up out per each every any all can may must will would should your you their they he she his her we "
    "our after before into over under about i me my do does did has have had so such which who whom what when where "
    "why how there here also other some more most only very just but".split())
NEGATIONS = frozenset("not no never none nothing nobody neither nor cannot without n't".split())
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*|\d+[A-Za-z][A-Za-z0-9]*")
_AMOUNT = re.compile(
    r"(?:[$€£¥₹]\s?)?(?<![\w.])\d+(?:[.,]\d+)*(?:\s?(?:%|percent|per cent))?"
    r"(?:[\s\-]+(?:business\s+days?|working\s+days?|calendar\s+days?|[A-Za-z]+))?", re.I)
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                 "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred")
_SPELLED = re.compile(r"\b(?:" + "|".join(_NUMBER_WORDS.split()) + r")(?:[\s\-]+(?:" + "|".join(_NUMBER_WORDS.split())
                      + r"))*(?:[\s\-]+(?:business\s+days?|working\s+days?|[A-Za-z]+))?", re.I)


def content_words(text: str) -> set[str]:
    out = set()
    for w in _WORD.findall(text.lower()):
        if w in STOP:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if len(w) > 4 and w.endswith(suffix):
                w = w[: -len(suffix)]
                break
        out.add(w)
    return out


def names(text: str) -> set[str]:
    """Capitalised words not opening a sentence, and codes mixing letters and digits (lower-cased)."""
    out = set()
    for sentence in re.split(r"(?<=[.!?:])\s+|\n+", text):
        for i, w in enumerate(_NAME.findall(sentence)):
            if (any(ch.isdigit() for ch in w) or (i > 0 and w[0].isupper())) and w.lower() not in STOP:
                out.add(w.lower())
    return out


Amount = tuple[Decimal, str]  # (amount in the base unit, unit group: "" for a bare number)
KNOWN_UNITS = frozenset({"second", "month", "business_day", "percent", "currency"})
BARE_ALIGNED = 0.5  # share of the claim's words its aligned sentence needs for a bare number to conflict


def quantities(text: str) -> set[Amount]:
    """The amounts a text states, each in its unit group's base unit; a unit word the reader
    does not know leaves a bare number (``12 claims`` -> (12, ""))."""
    out: set[Amount] = set()
    for m in [*_AMOUNT.finditer(text), *_SPELLED.finditer(text)]:
        span = m.group(0).replace("-", " ")
        q = read_quantity(span)
        if q is None and " " in span:  # the word after the number is no unit: "40% off", "5 of them"
            q = read_quantity(span.rsplit(" ", 1)[0])
        if q is not None:
            out.add((q.amount, q.unit if q.unit in KNOWN_UNITS else ""))
    return out


def negated(text: str) -> bool:
    low = text.lower()
    return any(w in NEGATIONS for w in _WORD.findall(low)) or "n't" in low


@dataclass
class Passage:
    """A passage prepared once: its sentences with their vectors, words, names, amounts, and
    token vectors (filled by :func:`prepare`)."""

    id: str
    text: str
    sentences: list[str]
    sentence_vectors: np.ndarray
    token_vectors: np.ndarray
    words: set[str]
    names: set[str]
    amounts: set[Amount]
    sentence_words: list[set[str]]
    sentence_amounts: list[set[Amount]]


def windows(text: str, size: int = WINDOW_WORDS) -> list[str]:
    words = text.split()
    return [" ".join(words[i:i + size]) for i in range(0, len(words), size)] or [""]


def token_rows(texts: Sequence[str], embedder: Any) -> list[tuple[np.ndarray, list[str] | None]]:
    """Each text's unit token vectors and the word of each token (None where the embedder
    does not say), in one batched pass where the embedder offers it."""
    if hasattr(embedder, "tokens"):
        return list(embedder.tokens(texts))
    return [(embedder.token_vectors(t), None) for t in texts]


def prepare(passages: Sequence[tuple[str, str]], embedder: Any) -> list[Passage]:
    """Passages prepared together: one batched pass for all their sentences, one for all their
    token windows."""
    cut = [split_sentences(text) or [text] for _, text in passages]
    flat = [s for sentences in cut for s in sentences]
    vectors = embedder.encode(flat) if flat else np.zeros((0, 384))
    spans = [windows(text) for _, text in passages]
    tokens = token_rows([w for ws in spans for w in ws], embedder)
    out, at, wt = [], 0, 0
    for (pid, text), sentences, ws in zip(passages, cut, spans):
        mine = [t for t, _ in tokens[wt:wt + len(ws)] if len(t)]
        sv = vectors[at:at + len(sentences)]
        out.append(Passage(pid, text, sentences, sv, np.vstack(mine) if mine else np.zeros((0, sv.shape[1])),
                           content_words(text), names(text), quantities(text), [content_words(s) for s in sentences],
                           [quantities(s) for s in sentences]))
        at, wt = at + len(sentences), wt + len(ws)
    return out


@dataclass
class Claim:
    """A claim prepared once: its words, names, amounts, negation, sentence and token vectors."""

    text: str
    words: set[str]
    names: set[str]
    amounts: set[Amount]
    negated: bool
    vector: np.ndarray
    tokens: np.ndarray  # unit token vectors of its content tokens (all tokens if none is content)


def prepare_claims(texts: Sequence[str], embedder: Any) -> list[Claim]:
    """Claims prepared together: one pass of the model for their sentence and token vectors
    where the embedder offers it (two otherwise)."""
    if not texts:
        return []
    if hasattr(embedder, "encode_tokens"):
        encoded = embedder.encode_tokens(list(texts))
    else:
        encoded = [(v, t, w) for v, (t, w) in zip(embedder.encode(list(texts)), token_rows(texts, embedder))]
    return [Claim(text, content_words(text), names(text), quantities(text), negated(text), vector,
                  _content(tokens, words)) for text, (vector, tokens, words) in zip(texts, encoded)]


def _content(vectors: np.ndarray, words: list[str] | None) -> np.ndarray:
    """The token vectors of the words that are not stop words (all of them when none is, or
    when the embedder does not say which word a token belongs to)."""
    if words is None or len(vectors) == 0 or len(words) != len(vectors):
        return vectors
    keep = np.array([w not in STOP and bool(_WORD.fullmatch(w)) for w in words], dtype=bool)
    return vectors[keep] if keep.any() else vectors


def signals(claim: Claim, passage: Passage) -> dict[str, Any]:
    """One (claim, passage) row of evidence (see the module docstring); floats rounded to 4 places."""
    scos = passage.sentence_vectors @ claim.vector if len(passage.sentences) else np.zeros(1)
    j = int(np.argmax(scos))
    tokens = (float(np.max(claim.tokens @ passage.token_vectors.T, axis=1).mean())
              if len(claim.tokens) and len(passage.token_vectors) else 0.0)
    n = max(1, len(claim.words))
    found = {a for a in claim.amounts if a in passage.amounts}
    aligned = passage.sentence_amounts[j]
    j_words = len(claim.words & passage.sentence_words[j]) / n
    # another amount of the claim's kind in the aligned sentence; for bare numbers (no unit: years,
    # counts) only where that sentence shares half of the claim's words, so it speaks of the same thing
    conflict = {a for a in claim.amounts - found
                if any(b[1] == a[1] for b in aligned) and (a[1] or j_words >= BARE_ALIGNED)}
    return {"passage": passage.id, "words": round(len(claim.words & passage.words) / n, 4),
            "tokens": round(tokens, 4), "sentence": round(float(scos[j]), 4),
            "aligned_words": round(j_words, 4),
            "amounts": len(claim.amounts), "amounts_found": len(found), "amounts_conflict": len(conflict),
            "names": len(claim.names), "names_missing": len(claim.names - passage.names),
            "negation_flip": claim.negated != negated(passage.sentences[j]), "aligned": j}
