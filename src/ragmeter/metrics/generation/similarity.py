"""Embedding metrics: no judge, only an embedding model (the bundled MiniLM by default).

- semantic_similarity: cos(e(answer), e(reference)), the cosine of the two texts' sentence
  embeddings (Ragas 0.4 SemanticSimilarity with no threshold; range [-1, 1], in practice
  [0, 1] for sentence-transformers models).
- token_match: BERTScore's greedy matching (Zhang et al. 2020, eq. 1-2) over the embedding
  model's contextual token vectors x (answer) and y (reference), unit length:
  R = mean_j max_i x_i . y_j,  P = mean_i max_j x_i . y_j,  F1 = 2PR / (P + R).
  No idf weighting and no baseline rescaling, and the model is the embedder (MiniLM by
  default, named in the provenance), so values are *not* those of published BERTScore
  (roberta-large layer 17). Alias ``bertscore_style``.

>>> import numpy as np
>>> x = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([[1.0, 0.0]])
>>> precision_recall_f1(x, y)   # 'x' token 2 matches nothing: P = (1 + 0) / 2, R = 1
(0.5, 1.0, 0.6666666666666666)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmeter.core.measure import Display, Measure, Param
from ragmeter.core.sample import Sample
from ragmeter.metrics.kinds import EmbeddingSpec, Unscorable
from ragmeter.metrics.spec_table import register

if TYPE_CHECKING:
    from ragmeter.embeddings.base import Embedder


def _texts(sample: Sample) -> tuple[str, str]:
    if sample.answer is None or not sample.answer.strip():
        raise Unscorable("the sample has no answer")
    if sample.reference is None or not sample.reference.strip():
        raise Unscorable("the sample has no reference answer")
    return sample.answer, sample.reference


def semantic_similarity(sample: Sample, measure: Measure, embedder: Embedder) -> float:
    answer, reference = _texts(sample)
    a, r = embedder.encode([answer, reference])
    return float(np.dot(a, r))


def precision_recall_f1(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Greedy matching of unit token vectors: x (candidate) against y (reference)."""
    sim = x @ y.T
    p, r = float(sim.max(axis=1).mean()), float(sim.max(axis=0).mean())
    return p, r, (0.0 if p + r <= 0 else 2 * p * r / (p + r))


def token_match(sample: Sample, measure: Measure, embedder: Embedder) -> float:
    answer, reference = _texts(sample)
    if not embedder.has_tokens:
        raise Unscorable(f"the embedder {embedder.identity.get('model')} gives no token vectors")
    x, y = embedder.token_vectors(answer), embedder.token_vectors(reference)
    if len(x) == 0 or len(y) == 0:
        raise Unscorable("the answer or the reference has no tokens")
    p, r, f = precision_recall_f1(x, y)
    scores: dict[str, float] = {"precision": p, "recall": r, "f1": f}
    return scores[measure.params["mode"]]


register(EmbeddingSpec(
    name="semantic_similarity", version=1, family="embedding",
    display=Display("sem sim", "semantic similarity"), range=(-1.0, 1.0), aliases=("answer_similarity",),
    definition="cosine of the sentence embeddings of the answer and the reference answer",
    source="Ragas 0.4 SemanticSimilarity (no threshold); embedder named in the provenance",
    undefined="the sample has no answer or no reference answer", compute=semantic_similarity))

register(EmbeddingSpec(
    name="token_match", version=1, family="embedding",
    display=Display("tok match", "token match"), range=(-1.0, 1.0), aliases=("bertscore_style",),
    definition="greedy max-cosine matching of contextual token vectors, answer vs reference: P, R or F1",
    source="Zhang et al. 2020 BERTScore (eq. 1-2), without idf or baseline rescaling, on the configured embedder",
    params={"mode": Param(str, "f1", choices=("f1", "precision", "recall"))},
    undefined="the sample has no answer or no reference answer", compute=token_match))
