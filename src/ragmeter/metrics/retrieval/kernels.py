"""The IR kernels that the label metrics and ``ragmeter trec`` both compute through.

Every function works on all queries at once (numpy, no loop over queries). Inputs:

- ``rel``: (n, L) bool, rel_i = the document at rank i is relevant (False past a list's end);
  cut a matrix at k with ``rel[:, :k]`` (no padding is needed: a missing rank adds nothing);
- ``found``: (n,) relevant documents retrieved, ``R``: (n,) relevant documents judged;
- ``grades``: (n, L) float grades, NaN (or anything <= 0) where a document has no gain.

The arithmetic follows trec_eval 10.0 (m_*.c) in its order of operations, so a label metric
and the trec measure it equals give the same bits (tests/metrics/retrieval/test_kernels.py checks both
against pytrec_eval, which is trec_eval's code):

- precision = found / depth (depth k for P@k; the list length for set_P), recall = found / R,
  success = 1 if found > 0;
- sum(P@i * rel_i) in rank order, each term cum_i / i (trec_eval's map and map_cut);
  average_precision = that / R;
- r_precision = sum(rel_i, i <= R) / R; reciprocal_rank = 1 / rank of the first relevant;
- DCG = sum(gain_i / d_i) in rank order, d_i = log2(i + 1) from the C library (trec_eval
  divides by it), or for ``'jk2002'`` d_i = max(1, log_base(i)) (Jarvelin & Kekalainen 2002);
  nDCG = DCG / DCG of the ideal ranking (every judged gain, sorted descending), both cut at k.

The example is q1 of the article "RAG Evaluation Metrics: Formulas and a Worked Example":

>>> import numpy as np
>>> rel = np.array([[False, True, False, True, False]])  # q1: relevant at 2 and 4, R = 3
>>> R = np.array([3])
>>> float(average_precision(rel, R)[0]) == (1/2 + 2/4) / 3, float(reciprocal_rank(rel)[0])
(True, 0.5)
>>> float(r_precision(rel, R)[0]) == 1 / 3, float(recall(found(rel), R)[0]) == 2 / 3
(True, True)
"""

from __future__ import annotations

import math

import numpy as np

from ragmeter.metrics.batch import ranks, row_sum, safe_divide

_LOG2 = [np.zeros(0)]


def found(rel: np.ndarray, k: int | None = None) -> np.ndarray:
    """Relevant documents within the top k (all ranks when k is None)."""
    return (rel if k is None else rel[:, :k]).sum(axis=1)


def precision(hits: np.ndarray, depth: np.ndarray | int) -> np.ndarray:
    """hits / depth (0 where depth is 0): P@k with depth k, set_P with the list length."""
    return safe_divide(hits, depth)


def recall(hits: np.ndarray, num_relevant: np.ndarray) -> np.ndarray:
    """hits / R (0 where R = 0): recall@k, set_recall, LlamaIndex's granular hit rate."""
    return safe_divide(hits, num_relevant)


def success(hits: np.ndarray) -> np.ndarray:
    """1.0 where any relevant document was found, else 0.0 (hit rate, trec_eval success.k)."""
    return (hits > 0).astype(np.float64)


def precision_sum(rel: np.ndarray) -> np.ndarray:
    """sum(P@i * rel_i) in rank order, each term rel_so_far / i as trec_eval divides: the
    numerator of average precision and of rank-weighted precision."""
    return row_sum(np.cumsum(rel, axis=1) / ranks(rel.shape[1]) * rel)


def average_precision(rel: np.ndarray, num_relevant: np.ndarray) -> np.ndarray:
    """sum(P@i * rel_i) / R, 0 where R = 0 (trec_eval map_cut.k; map on the whole list)."""
    return safe_divide(precision_sum(rel), num_relevant)


def r_precision(rel: np.ndarray, num_relevant: np.ndarray) -> np.ndarray:
    """sum(rel_i, i <= R) / R, 0 where R = 0 (trec_eval Rprec)."""
    in_top_r = ranks(rel.shape[1]) <= num_relevant[:, None]
    return safe_divide((rel & in_top_r).sum(axis=1), num_relevant)


def first_relevant(rel: np.ndarray) -> np.ndarray:
    """The 1-based rank of the first relevant document, 0 where there is none."""
    if rel.shape[1] == 0:
        return np.zeros(rel.shape[0], np.int64)
    first = rel.argmax(axis=1)
    return np.where(rel[np.arange(rel.shape[0]), first], first + 1, 0)


def reciprocal_rank(rel: np.ndarray) -> np.ndarray:
    """1 / rank of the first relevant document, 0 where none (trec_eval recip_rank)."""
    rank = first_relevant(rel)
    return safe_divide(rank > 0, rank)


def gains(grades: np.ndarray, kind: str = "linear", gain_map: dict[float, float] | None = None) -> np.ndarray:
    """The gain of each grade: g (``'linear'``, trec_eval) or 2^g - 1 (``'exp'``, Burges et al.
    2005) for g > 0, else 0 (NaN, unjudged and negative grades); ``gain_map`` (trec_eval's
    ``ndcg.1=3,2=9``) gives the gain of the grades it names, whatever their sign."""
    positive = np.where(grades > 0, grades, 0.0)
    g = positive if kind == "linear" else np.exp2(positive) - 1.0
    if gain_map:
        g = g.copy()
        for level, gain in gain_map.items():
            g[grades == level] = gain
    return g


def ideal_gains(judged_grades: np.ndarray, kind: str = "linear",
                gain_map: dict[float, float] | None = None) -> np.ndarray:
    """Every judged document's gain, sorted descending, gains <= 0 as 0 (trec_eval's ideal
    ranking stops at the first gain <= 0)."""
    g = gains(judged_grades, kind, gain_map)
    ideal = np.sort(g, axis=1)[:, ::-1]
    return np.where(ideal > 0, ideal, 0.0)


def log2_ranks(width: int) -> np.ndarray:
    """log2(i + 1) for ranks 1..width, from the C library (math.log2, which trec_eval calls;
    numpy's own vectorised log2 may differ in the last bit), as a (1, width) row."""
    table = _LOG2[0]
    if len(table) < width:
        size = max(width, 2 * len(table), 1024)
        table = _LOG2[0] = np.array([math.log2(i + 2) for i in range(size)])
    return table[None, :width]


def discounts(width: int, kind: str = "log2", base: float = 2.0) -> np.ndarray:
    """The divisor d_i of the gain at rank i, as a (1, width) row: log2(i + 1), or for
    ``'jk2002'`` 1 for i < base and log_base(i) from rank base on."""
    if kind == "log2":
        return log2_ranks(width)
    i = ranks(width)
    return np.where(i < base, 1.0, np.log(np.maximum(i, base)) / math.log(base))


def dcg(gain: np.ndarray, kind: str = "log2", base: float = 2.0) -> np.ndarray:
    """sum(gain_i / d_i) in rank order."""
    return row_sum(gain / discounts(gain.shape[1], kind, base))


def ndcg(gain: np.ndarray, ideal: np.ndarray, k: int | None = None, kind: str = "log2",
         base: float = 2.0) -> np.ndarray:
    """DCG@k / ideal DCG@k, 0 where the ideal is 0 (no cut-off when k is None)."""
    if k is not None:
        gain, ideal = gain[:, :k], ideal[:, :k]
    return safe_divide(dcg(gain, kind, base), dcg(ideal, kind, base))
