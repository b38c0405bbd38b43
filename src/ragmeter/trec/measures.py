"""trec_eval's measures, computed on blocks of topics at once (numpy, no per-topic loop).

Each ranked document carries trec_eval's label (``form_res_rels.c``): its grade (>= 0), -1
when it is not in the qrels, -2 when its qrels grade is negative; NaN pads past a list's end.
Per topic, with level l (-l): rel_i = label_i >= l (for l <= -1 that takes in -1 and -2
documents, as trec_eval does), R = qrels grades >= max(l, 0), NRR = judged documents retrieved
with grade >= max(l, 0), D = sum(rel_i) - NRR (0 unless l <= -1), P@i = precision at rank i.
Definitions follow trec_eval 10.0 (m_*.c) down to the order of the arithmetic, so that every
printed digit agrees (checked against the binary in tests/acceptance/test_trec_eval_binary.py):

- map: sum(P@i * rel_i) / R when some rel_i (R = 0 then gives inf, as in C); map_cut.k the
  same over i <= k (0 when R = 0); gm_map: geometric mean of max(AP, 1e-5).
- P.k: sum(rel_i, i <= k) / k; recall.k: / R; relative_P.k: / min(k, R); success.k: any.
- Rprec: sum(rel_i, i <= min(R, num_ret)) / R; Rprec_mult.x at c = (long)(x * R + 0.9):
  NRR / c past the list's end, else (cum_c - D) / c when positive.
- recip_rank: 1 / rank of the first relevant document.
- bpref: (1/R) sum over retrieved judged relevant r of (1 - min(n_r, R) / min(N, R)), n_r =
  judged non-relevant documents above r (1 when n_r = 0); -1 and -2 documents are skipped.
- iprec_at_recall.x: the interpolated precision max(P@j, j >= rank of the c-th relevant),
  c = lround(x * R) (9.0.8: (long)(x * R + 0.9), ``iprec_rule='v9'``); 0 when c > NRR; for
  c <= 0 the value at the first relevant document, and NaN when nothing was retrieved
  (trec_eval divides 0 by 0 there: under -J or -M 0, or a -c topic). 11pt_avg: their mean,
  summed from the last cut-off down, cut-offs taken in the order given (trec_eval's).
- ndcg_cut.k: sum(g_i / log2(i + 1), i <= k) / the same over the ideal ranking (every judged
  document with a grade > 0, best first), the grades as gains. -l does not apply to nDCG. ndcg
  and the other gain measures (remappable gains: ndcg.1=3,2=9) are in
  :mod:`ragmeter.trec.gain_measures`; relstring, infAP, utility, binG, yaap and rbp_resid in
  :mod:`ragmeter.trec.judged_measures`.
- set_P = NRR / num_ret, set_recall = NRR / R, set_relative_P = NRR / min(num_ret, R),
  set_map = NRR * NRR / (num_ret * R), set_F.x = (x + 1) P R / (x P + R).
- unj.k: (documents labelled -1 or -2 in the top k) / k. Counts: num_ret, num_rel,
  num_rel_ret (NRR), num_nonrel_judged_ret.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ragmeter.metrics.batch import ranks, row_sum, safe_divide
from ragmeter.metrics.retrieval import kernels


def c_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """C's division: x / 0 is inf, 0 / 0 is NaN (callers guard where trec_eval guards)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(num, np.float64) / np.asarray(den, np.float64)


def sparse_running_sums(rows: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """For ``values`` given in row order (and in rank order within a row: ``np.nonzero``'s), the
    running sum at each value and each of the ``n`` rows' total, added left to right as trec_eval
    adds: the dense row sums without their zeros, for measures with a few terms per topic."""
    if not len(rows):
        return np.zeros(0), np.zeros(n)
    counts = np.bincount(rows, minlength=n)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    packed = np.zeros((n, int(counts.max())))
    at = np.arange(len(rows)) - starts[rows]
    packed[rows, at] = values
    running = np.cumsum(packed, axis=1)
    return running[rows, at], running[:, -1]


def sparse_row_sum(rows: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Each row's total of :func:`sparse_running_sums`."""
    return sparse_running_sums(rows, values, n)[1]


def minus_nan(shape) -> np.ndarray:
    """trec_eval's 0.0 / 0.0: a NaN with the sign bit set (x86-64), printed ``-nan``."""
    return np.full(shape, -np.nan)


@dataclass
class Block:
    """Topics [a, b): labels at each rank (NaN past the end), judged grades, the level."""

    grades: np.ndarray  # (n, L) label per rank: grade >= 0, -1 not in the qrels, -2 judged negative
    lengths: np.ndarray  # (n,)
    judged: np.ndarray  # (n, M) grades >= 0, descending, -inf padded
    level: float
    iprec_rule: str = "v10"
    stale: dict[int, np.ndarray] = field(default_factory=dict)  # row -> an earlier topic's judged grades
    num_docs: int = 0  # -N
    rel: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.rel = self.grades >= self.level
        floor = max(self.level, 0.0)
        self.R = (self.judged >= floor).sum(axis=1)
        self.judged_rel = self.rel if self.level >= 0 else self.grades >= floor
        self.num_rel_ret = self.judged_rel.sum(axis=1)

    @cached_property
    def level_grades(self) -> np.ndarray:
        """The judged grades the gain measures count (``rel_levels``): each topic's, or for one
        without any grade >= 0, the last such topic's before it (trec_eval keeps its buffer)."""
        if not self.stale:
            return self.judged
        width = max([self.judged.shape[1], *(len(g) for g in self.stale.values())])
        out = np.full((len(self.lengths), width), -np.inf)
        out[:, :self.judged.shape[1]] = self.judged
        for row, grades in self.stale.items():
            out[row, :len(grades)] = grades
        return out

    @cached_property
    def cum(self) -> np.ndarray:
        """Relevant documents at or above each rank (by -l, as trec_eval counts rel_so_far)."""
        return np.cumsum(self.rel, axis=1)

    @cached_property
    def extra(self) -> np.ndarray:
        """D: relevant by -l but not judged relevant (documents labelled -1/-2 when l <= -1)."""
        if self.level >= 0:
            return np.zeros(len(self.lengths), np.int64)
        return self.rel.sum(axis=1) - self.num_rel_ret

    def cum_at(self, k: np.ndarray) -> np.ndarray:
        """cum at rank k per topic (k >= 1; past the width: the total)."""
        width = self.cum.shape[1]
        if width == 0:
            return np.zeros(len(k), np.int64)
        return self.cum[np.arange(len(k)), np.clip(k, 1, width) - 1]


def running(b: Block, name: str, terms: Callable[[Block], np.ndarray]) -> np.ndarray:
    """The running sums (left to right) of ``terms(b)`` along each row, computed once per block:
    a cut-off k's sum is column k - 1, the same additions as summing the first k alone."""
    cache = b.__dict__.setdefault("_running", {})
    if name not in cache:
        cache[name] = np.cumsum(terms(b), axis=1)
    return cache[name]


def at_cut(values: np.ndarray, k: int) -> np.ndarray:
    """Column k - 1 of running sums (the last one for a k past the widest list; 0 for none)."""
    if not values.shape[1]:
        return np.zeros(values.shape[0])
    return values[:, min(k, values.shape[1]) - 1]


def precision_running(b: Block) -> np.ndarray:
    """Running sum of P@i at the relevant ranks (AP's numerator up to each rank)."""
    return running(b, "precision", lambda b: np.cumsum(b.rel, axis=1) / ranks(b.rel.shape[1]) * b.rel)


def _map(b: Block, _):
    return [np.where(b.rel.any(axis=1), c_divide(at_cut(precision_running(b), b.rel.shape[1]), b.R), 0.0)]


def _rprec(b: Block, _):
    return [kernels.r_precision(b.rel, b.R)]


def _bpref(b: Block, _):
    judged_nonrel = (b.grades >= 0) & (b.grades < b.level)
    above = np.cumsum(judged_nonrel, axis=1)
    n = ((b.judged >= 0) & (b.judged < b.level)).sum(axis=1)
    r = b.R[:, None].astype(np.float64)
    penalty = safe_divide(np.minimum(above, r), np.minimum(n[:, None], r))
    terms = np.where(b.judged_rel, np.where(above > 0, 1.0 - penalty, 1.0), 0.0)
    total = row_sum(terms)
    return [np.where(b.R > 0, safe_divide(total, b.R), total)]


def _recip_rank(b: Block, _):
    return [kernels.reciprocal_rank(b.rel)]


def _lround(x: np.ndarray) -> np.ndarray:
    """C's lround: halves away from zero (|x| - floor(|x|) is exact: no rounding up of 0.49999...)."""
    a = np.abs(x)
    whole = np.floor(a)
    return (np.sign(x) * (whole + (a - whole >= 0.5))).astype(np.int64)


def _interpolated(b: Block, fractions: tuple) -> list[np.ndarray]:
    """trec_eval's interpolated precision at recall cut-offs (m_iprec_at_recall.c and
    m_11pt_avg.c), one array per cut-off in the order given. trec_eval walks the ranking from
    the bottom with rel_so_far = NRR, decremented at each relevant rank, and hands out the
    cut-offs from the last one down as rel_so_far meets them; a cut-off it cannot meet in that
    order (one that is not below the previous, or <= 0) gets, with all before it, the value
    reached at the top. Cut-offs above NRR at the end of the list are skipped (0)."""
    n = len(b.lengths)
    adjusted = b.cum - b.extra[:, None]  # rel_so_far while walking up, at each rank
    prec = np.where(b.rel, c_divide(adjusted, ranks(b.rel.shape[1])), 0.0)
    best_after = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1] if prec.shape[1] else prec
    nrr = b.num_rel_ret

    def at(c: np.ndarray) -> np.ndarray:  # best_after at the rank where rel_so_far meets c (c >= 1)
        if not prec.shape[1]:
            return np.zeros(n)
        pos = np.argmax(adjusted >= c[:, None], axis=1)
        return best_after[np.arange(n), pos]

    with np.errstate(invalid="ignore"):
        top = np.where(nrr > 0, at(np.ones(n, np.int64)), c_divide(nrr, b.lengths))
    top = np.where((nrr == 0) & (b.lengths == 0), minus_nan(n), top)
    values: list[np.ndarray] = [np.zeros(n)] * len(fractions)
    skipping = np.ones(n, bool)
    stuck = np.zeros(n, bool)
    last = nrr.copy()
    for k in range(len(fractions) - 1, -1, -1):
        x = fractions[k] * b.R
        c = np.trunc(x + 0.9).astype(np.int64) if b.iprec_rule == "v9" else _lround(x)
        skipping = skipping & (c > nrr)
        stuck = stuck | (~skipping & ((c < 1) | (c > last)))
        met = ~skipping & ~stuck
        values[k] = np.where(skipping, 0.0, np.where(met, at(np.maximum(c, 1)), top))
        last = np.where(met, c, last)
    return values


def _interpolated_once(b: Block, levels: tuple) -> list[np.ndarray]:
    """:func:`_interpolated`, computed once per block for iprec_at_recall and 11pt_avg alike."""
    cache = b.__dict__.setdefault("_interpolated", {})
    if levels not in cache:
        cache[levels] = _interpolated(b, levels)
    return cache[levels]


def _iprec(b: Block, levels: tuple):
    return _interpolated_once(b, levels)


def _avg11(b: Block, levels: tuple):
    total = np.zeros(b.grades.shape[0])
    for v in reversed(_interpolated_once(b, levels)):  # trec_eval adds from the last cut-off down
        total = total + v
    return [total / len(levels)]


def _P(b: Block, cuts):
    return [kernels.precision(kernels.found(b.rel, k), k) for k in cuts]


def _recall(b: Block, cuts):
    return [kernels.recall(kernels.found(b.rel, k), b.R) for k in cuts]


def _relative_P(b: Block, cuts):
    return [kernels.precision(kernels.found(b.rel, k), np.minimum(k, b.R)) for k in cuts]


def _success(b: Block, cuts):
    return [kernels.success(kernels.found(b.rel, k)) for k in cuts]


def _map_cut(b: Block, cuts):
    sums = precision_running(b)
    return [safe_divide(at_cut(sums, k), b.R) for k in cuts]


def _rprec_mult(b: Block, mults):
    out = []
    for x in mults:
        c = np.trunc(x * b.R + 0.9).astype(np.int64)  # C: (long)(x * R + 0.9)
        beyond = c > b.lengths
        adjusted = b.cum_at(c) - b.extra
        value = np.where(beyond, c_divide(b.num_rel_ret, c), np.where(adjusted > 0, c_divide(adjusted, c), 0.0))
        out.append(np.where(c >= 1, value, 0.0))
    return out


def _ndcg_cut(b: Block, cuts):
    """DCG@k / ideal DCG@k with the grades as gains (the ideal over every judged grade > 0)."""
    dcg = running(b, "dcg", lambda b: kernels.gains(b.grades) / kernels.log2_ranks(b.grades.shape[1]))
    ideal = running(b, "ideal_dcg", lambda b: kernels.ideal_gains(b.judged) / kernels.log2_ranks(b.judged.shape[1]))
    return [safe_divide(at_cut(dcg, k), at_cut(ideal, k)) for k in cuts]


def _set_P(b: Block, _):
    return [kernels.precision(b.num_rel_ret, b.lengths)]


def _set_relative_P(b: Block, _):
    return [kernels.precision(b.num_rel_ret, np.minimum(b.lengths, b.R))]


def _set_recall(b: Block, _):
    return [kernels.recall(b.num_rel_ret, b.R)]


def _set_map(b: Block, _):
    nrr = b.num_rel_ret.astype(np.float64)
    return [safe_divide(nrr * nrr, b.lengths.astype(np.float64) * b.R.astype(np.float64))]


def _set_F(b: Block, params):
    x = params[0] if params else 1.0
    p = kernels.precision(b.num_rel_ret, b.lengths)
    r = kernels.recall(b.num_rel_ret, b.R)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (x + 1.0) * p * r / (x * p + r)
    return [np.where(b.num_rel_ret > 0, value, 0.0)]


def _unj(b: Block, cuts):
    unjudged = b.grades < 0  # labels -1 and -2; NaN padding is not
    return [unjudged[:, :k].sum(axis=1) / k for k in cuts]


def _count(attr: str):
    def compute(b: Block, _):
        if attr == "num_nonrel_judged_ret":
            return [((b.grades >= 0).sum(axis=1) - b.num_rel_ret).astype(np.float64)]
        return [np.asarray(getattr(b, attr), dtype=np.float64)]
    return compute


COMPUTE: dict[str, Callable[[Block, tuple], list[np.ndarray]]] = {
    "num_ret": _count("lengths"), "num_rel": _count("R"), "num_rel_ret": _count("num_rel_ret"), "map": _map,
    "gm_map": _map, "Rprec": _rprec, "bpref": _bpref, "recip_rank": _recip_rank, "iprec_at_recall": _iprec, "P": _P,
    "recall": _recall, "gm_bpref": _bpref, "Rprec_mult": _rprec_mult, "11pt_avg": _avg11, "ndcg_cut": _ndcg_cut,
    "map_cut": _map_cut, "relative_P": _relative_P, "success": _success, "set_P": _set_P,
    "set_relative_P": _set_relative_P, "set_recall": _set_recall, "set_map": _set_map, "set_F": _set_F,
    "num_nonrel_judged_ret": _count("num_nonrel_judged_ret"), "unj": _unj,
}
