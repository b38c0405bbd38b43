"""Which chunks each generation attempt is written from, decided by the seed alone.

Each kind walks its own seeded permutation of the corpus: attempt ``a`` uses chunk
``perm[a mod N]``, and its ``variant`` (the prompt asks for "question number v") is
``a div N + 1``, so a second pass over the corpus asks for different questions. Two-chunk kinds
(multi, conversational) pair that chunk with its nearest neighbour by cosine similarity of the
embedder's vectors (the second nearest on the second pass, and so on), skipping neighbours whose
cosine is at least ``same_text`` (copies of the same text). The choice depends on the seed, the
corpus and the embedder only, so a rerun asks the judge the same requests and the ledger answers.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from ragmeter.core.errors import InvalidParameterError

SAME_TEXT = 0.98


class SourcePicker:
    def __init__(self, ids: Sequence[str], vectors: np.ndarray, *, seed: int = 0, same_text: float = SAME_TEXT) -> None:
        if not ids:
            raise InvalidParameterError("the corpus has no chunks to write questions from")
        self.ids = list(ids)
        self.seed = seed
        sims = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
        self.neighbours: list[list[tuple[int, float]]] = []
        for i in range(len(self.ids)):
            order = np.argsort(-sims[i], kind="stable")
            self.neighbours.append([(int(j), float(sims[i, j])) for j in order if j != i and sims[i, j] < same_text])
        self._perms: dict[str, list[int]] = {}

    def _perm(self, kind: str) -> list[int]:
        if kind not in self._perms:
            order = list(range(len(self.ids)))
            random.Random(f"{self.seed}:{kind}").shuffle(order)
            self._perms[kind] = order
        return self._perms[kind]

    def pick(self, kind: str, attempt: int) -> tuple[tuple[str, ...], int, float | None]:
        """(chunk ids, variant, cosine of the pair or None) for attempt ``attempt`` of ``kind``."""
        n = len(self.ids)
        anchor = self._perm(kind)[attempt % n]
        variant = attempt // n + 1
        if kind not in ("multi", "conversational"):
            return (self.ids[anchor],), variant, None
        near = self.neighbours[anchor]
        if not near:
            if kind == "multi":
                raise InvalidParameterError("multi-chunk questions need two chunks with different texts; this corpus "
                                            "has none: drop multi from --kinds")
            return (self.ids[anchor], self.ids[anchor]), variant, None  # a conversation about one chunk
        j, cos = near[(attempt // n) % len(near)]
        return (self.ids[anchor], self.ids[j]), variant, cos
