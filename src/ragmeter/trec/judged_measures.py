"""trec_eval's relstring, infAP, utility, binG, yaap and rbp_resid on blocks of topics (numpy),
as their plain-Python ports (:mod:`ragmeter.trec.lean_judged`, :mod:`ragmeter.trec.lean_gains`)
compute them (the formulas are theirs and in each function's docstring)."""

from __future__ import annotations

import math

import numpy as np

from ragmeter.metrics.batch import row_sum
from ragmeter.metrics.retrieval.kernels import log2_ranks
from ragmeter.trec.errors import EXIT_TOPIC, TrecMeasureError
from ragmeter.trec.gain_measures import powers, rbp_persistence
from ragmeter.trec.lean_measures import INFAP_EPSILON
from ragmeter.trec.measures import Block, at_cut, c_divide, precision_running, sparse_row_sum
from ragmeter.trec.rels import NONPOOL, UNJUDGED

_CHARS = np.array(list("0123456789"))


def _relstring(b: Block, values: tuple):
    x = values[0]
    n = max(0, int(x)) if math.isfinite(x) and abs(x) < 2 ** 62 else 0
    labels = b.grades[:, :n]
    chars = np.full(labels.shape, "", dtype="<U1")
    known = np.isfinite(labels)
    digit = known & (labels >= 0) & (labels <= 9)
    chars[digit] = _CHARS[labels[digit].astype(np.int64)]
    chars[known & (labels > 9)] = ">"
    chars[labels == NONPOOL] = "-"
    chars[labels == UNJUDGED] = "."
    chars[known & (labels < 0) & (labels != NONPOOL) & (labels != UNJUDGED)] = "<"
    return [np.array(["".join(row) for row in chars.tolist()], dtype=object)]


def _infAP(b: Block, _):
    """sum over judged relevant documents at rank j+1 of 1 (j = 0) or 1/(j+1) + j/(j+1) x
    ((r - 1 + n + u) / j) x ((r - 1 + e) / (r - 1 + n + 2e)), r, n, u the relevant,
    non-relevant and pooled-unjudged documents up to j, e = 0.00001; over R."""
    g = b.grades
    rel = (g >= 0) & (g >= b.level)
    rows, cols = np.nonzero(rel)  # the formula is taken at the relevant ranks only
    r = np.cumsum(rel, axis=1)[rows, cols].astype(np.float64)
    n = np.cumsum((g >= 0) & (g < b.level), axis=1)[rows, cols].astype(np.float64)
    u = np.cumsum(g == UNJUDGED, axis=1)[rows, cols].astype(np.float64)
    j = cols.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        later = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r - 1 + n + u) / j)
                 * ((r - 1 + INFAP_EPSILON) / (r - 1 + n + 2 * INFAP_EPSILON)))
    total = sparse_row_sum(rows, np.where(j == 0, 1.0, later), len(b.lengths))
    return [np.where(b.R > 0, c_divide(total, b.R), total)]


def _utility(b: Block, values: tuple):
    """p1 a + p2 b + p3 c + p4 d over the contingency table (a relevant retrieved, b non-relevant
    retrieved, c relevant missed, d = N + a - retrieved - relevant with N = -N)."""
    if len(values) != 4:
        raise TrecMeasureError(f"utility takes 4 coefficients (relevant retrieved, non-relevant retrieved, relevant "
                               f"missed, non-relevant missed), got {len(values)} (trec_eval: improper number of "
                               "coefficients)", exit_code=EXIT_TOPIC)
    p1, p2, p3, p4 = values
    a, ret, rel = b.num_rel_ret, b.lengths, b.R
    return [p1 * a + p2 * (ret - a) + p3 * (rel - a) + p4 * (b.num_docs + a - ret - rel)]


def _binG(b: Block, _):
    """sum over relevant documents of 1 / log2(2 + non-relevant documents above it), over R."""
    rel = b.rel
    rows, cols = np.nonzero(rel)
    above = cols + 1 - np.cumsum(rel, axis=1)[rows, cols]  # i + 1 - rel_so_far: non-relevant above
    table = log2_ranks(int(above.max(initial=0)) + 1)[0]
    total = sparse_row_sum(rows, 1.0 / table[above], len(b.lengths))
    return [np.where(rel.any(axis=1), c_divide(total, b.R), 0.0)]


def _yaap(b: Block, _):
    """log((1 + s) / (1 + R - s)), s = sum of P@i at the relevant ranks (Robertson 2012)."""
    s = at_cut(precision_running(b), b.rel.shape[1])
    ratio = c_divide(1.0 + s, (1.0 + b.R) - s)
    return [np.array([math.log(v) if v > 0 else (-math.inf if v == 0 else -math.nan) for v in ratio.tolist()])]


def _rbp_resid(b: Block, values: tuple):
    """p^num_ret + (1 - p) sum of p^i over unjudged ranks i (-1 or -2), when there is one."""
    p = rbp_persistence(values)
    unjudged = b.grades < 0
    weights = powers(p, b.grades.shape[1])
    total = row_sum(np.where(unjudged, weights[None, :b.grades.shape[1]], 0.0))
    return [np.where(unjudged.any(axis=1), weights[b.lengths] + (1 - p) * total, 0.0)]


JUDGED_COMPUTE = {"relstring": _relstring, "infAP": _infAP, "utility": _utility, "binG": _binG, "yaap": _yaap,
                  "rbp_resid": _rbp_resid}
