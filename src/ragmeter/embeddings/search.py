"""Exact dense search over a corpus: cosine similarity of unit vectors, top k by brute force.

``DenseIndex(corpus, embedder)`` embeds every chunk once; ``index(question, k)`` returns the
ids of the k most similar chunks, ties broken by corpus order. It is also a retriever that
``ragmeter.evaluate_retriever`` accepts (a callable taking the question and k). Meant for
candidate lists (labeling, test-set checks) and small corpora: n x d floats in memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ragmeter.embeddings.base import Embedder


class DenseIndex:
    def __init__(self, corpus: Mapping[str, str], embedder: Embedder) -> None:
        self.ids: list[str] = list(corpus)
        self.embedder = embedder
        self.vectors = embedder.encode([corpus[i] for i in self.ids]) if self.ids else np.zeros((0, 1))

    def similarities(self, texts: Sequence[str]) -> np.ndarray:
        """Cosine of each text (rows) with each chunk (columns)."""
        return np.asarray(self.embedder.encode(list(texts)), dtype=np.float64) @ self.vectors.T

    def search(self, texts: Sequence[str], k: int) -> list[list[tuple[str, float]]]:
        """The top-k (id, cosine) of each text, most similar first; ties keep corpus order."""
        if not self.ids:
            return [[] for _ in texts]
        sims = self.similarities(texts)
        out = []
        for row in sims:
            order = np.argsort(-row, kind="stable")[:k]
            out.append([(self.ids[j], float(row[j])) for j in order])
        return out

    def __call__(self, question: str, k: int | None = 10) -> list[dict]:
        hits = self.search([question], k or len(self.ids))[0]
        return [{"id": cid, "score": score} for cid, score in hits]
