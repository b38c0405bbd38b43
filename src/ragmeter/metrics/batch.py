"""The shared input and output of every label kernel: grades at each rank for all queries at
once (``RankedBatch``), and per-query values with the queries left undefined (``Computed``).

``RankedBatch`` holds, for n queries, the grade of the chunk at each rank (n x L, NaN for an
unlabeled chunk or a position past the end of a short list, so it is never relevant and has
no gain, whatever the threshold), the list lengths, and every
label's grade sorted descending (n x M, padded with -inf) for R and the ideal ranking.
Metrics are pure functions of a batch and a cut-off; they never loop over queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragmeter.core.columns import LabelColumns

NO_RELEVANT = "no relevant chunk labeled"
_COMPARE_CELLS = 1 << 22  # label x rank comparisons made at a time


@dataclass(frozen=True)
class Computed:
    """Per-query values, and which queries the metric is undefined for (with the reason)."""

    values: np.ndarray
    undefined: np.ndarray
    reason: str = NO_RELEVANT


@dataclass(frozen=True)
class RankedBatch:
    grades: np.ndarray  # (n, L) float64, NaN where unlabeled or past the end
    lengths: np.ndarray  # (n,) int64
    label_grades: np.ndarray  # (n, M) float64, descending, -inf padding
    has_labels: np.ndarray  # (n,) bool: the query has at least one label

    @property
    def n(self) -> int:
        return self.grades.shape[0]

    @classmethod
    def from_lists(cls, ranked: Sequence[Sequence[str]], labels: Sequence[Mapping[str, float]]) -> RankedBatch:
        """Build from ranked id lists and id -> grade maps (one pair per query)."""
        return cls.from_columns(LabelColumns.from_lists([""] * len(ranked), ranked, labels))

    @classmethod
    def from_columns(cls, columns: LabelColumns, depth: int | None = None) -> RankedBatch:
        """Build from label columns, by array operations on the chunk codes: each label is
        compared with every rank of its query's list (codes are equal where the ids are), and
        its grade goes to the ranks it matches. ``depth``: only the top ``depth`` ranks are
        read (every measure cuts at or above it; the lengths stay the lists' own)."""
        n = len(columns)
        lengths = columns.ranked_lengths()
        counts = columns.label_counts()
        longest = int(lengths.max()) if n else 0
        width = longest if depth is None else min(depth, longest)
        label_width = int(counts.max()) if n else 0
        every = np.full((n, longest), -1, dtype=columns.ranked.dtype)
        _scatter(every, lengths, columns.ranked)
        codes = every[:, :width]
        grades = np.full((n, width), np.nan, dtype=np.float64)
        label_rows = np.repeat(np.arange(n), counts)
        step = max(1, _COMPARE_CELLS // max(1, width))  # labels compared at a time: bounded memory
        for start in range(0, len(label_rows), step):
            rows = label_rows[start:start + step]
            label, rank = np.nonzero(codes[rows] == columns.labels[start:start + step, None])
            grades[rows[label], rank] = columns.grades[start + label]
        label_grades = np.full((n, label_width), -np.inf, dtype=np.float64)
        _scatter(label_grades, counts, columns.grades)
        label_grades = -np.sort(-label_grades, axis=1)  # descending, the -inf padding last
        return cls(grades, lengths, label_grades, counts > 0)

    def cut(self, k: int | None) -> np.ndarray:
        """Grades of the top k ranks; ``None``: all. The width is min(k, longest list): a
        padded rank (NaN) is never relevant and has no gain, so no kernel needs the padding
        and a k past the longest list costs nothing (``--k 1000000000`` allocates no more)."""
        if k is None:
            return self.grades
        return self.grades[:, :k]

    def num_relevant(self, rel: float) -> np.ndarray:
        """R: the number of labeled chunks with grade >= rel, retrieved or not."""
        return (self.label_grades >= rel).sum(axis=1)


def _scatter(matrix: np.ndarray, lengths: np.ndarray, flat: np.ndarray) -> None:
    """Row i of ``matrix`` starts with the next ``lengths[i]`` values of ``flat``, for every i
    (the rows' leading cells, in row order, are where a boolean mask puts ``flat``)."""
    if not len(flat):
        return
    width = matrix.shape[1]
    if len(flat) == matrix.size:  # every row full
        matrix[...] = flat.reshape(matrix.shape)
        return
    matrix[np.arange(width)[None, :] < lengths[:, None]] = flat


def ranks(width: int) -> np.ndarray:
    """1-based ranks as a (1, width) row, for broadcasting."""
    return np.arange(1, width + 1, dtype=np.float64)[None, :]


def safe_divide(num: np.ndarray | float, den: np.ndarray | float) -> np.ndarray:
    """num / den where den > 0, else 0 (callers mark those queries undefined separately)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def row_sum(x: np.ndarray) -> np.ndarray:
    """Sum along each row in rank order (sequential, as trec_eval adds): unlike numpy's
    pairwise ``sum``, the result cannot depend on how far a row is padded, so blocking,
    partitioning or streaming never moves the last bit."""
    if x.shape[1] == 0:
        return np.zeros(x.shape[0])
    return np.cumsum(x, axis=1, dtype=np.float64)[:, -1]
