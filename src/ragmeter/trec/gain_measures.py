"""trec_eval's gain measures on blocks of topics (numpy): ndcg, dcg, ideal_dcg, ndcg_rel, Rndcg,
G and rbp, exactly as their plain-Python ports (:mod:`ragmeter.trec.lean_gains`,
:mod:`ragmeter.trec.lean_measures`) and trec_eval compute them.

Gains come from trec_eval's gain table (:mod:`ragmeter.trec.gains`): by default each grade is
its own gain; ``level=gain`` pairs change them. Per topic: r_i = the gain of the document at
rank i (0 for unjudged ones), g_0 >= g_1 >= ... > 0 the ideal ranking's gains (L of them),
d_i = log2(i + 2) (the C library's), rdcg_i = sum(r_j / d_j, j <= i), idcg_i likewise over g.
Sums are taken left to right, as trec_eval adds.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ragmeter.metrics.batch import row_sum
from ragmeter.metrics.retrieval.kernels import log2_ranks
from ragmeter.trec.gains import gain_table
from ragmeter.trec.measures import Block, _divide


def integer_gains(values: tuple) -> tuple[tuple[int, float], ...]:
    """The ``level=gain`` pairs whose level is an integer (gain_init.c's valid_int)."""
    return tuple((int(a), b) for a, b in values if re.fullmatch(r"[+-]?[0-9]+", a))


def c_log2(x: np.ndarray) -> np.ndarray:
    """The C library's log2 of each value: whole numbers from its table, the rest one by one
    (numpy's own log2 may differ in the last bit)."""
    x = np.asarray(x, np.float64)
    whole = (x >= 2) & (x < 1 << 20) & (np.floor(x) == x)
    out = np.empty_like(x)
    if whole.any():
        k = x[whole].astype(np.int64)
        out[whole] = log2_ranks(int(k.max()) - 1)[0, k - 2]
    rest = ~whole
    if rest.any():
        out[rest] = [math.log2(v) if v > 0 else (-math.inf if v == 0 else -math.nan) for v in x[rest].tolist()]
    return out


class Gains:
    """A block's gains for one parameter set: ``results`` (n, width), ``ideal`` (n, M) best first
    and 0-padded, ``length`` (n,) the number of positive ideal gains."""

    def __init__(self, b: Block, values: tuple) -> None:
        pairs = integer_gains(values)
        grades, judged = b.grades, b.level_grades
        top = np.max(judged, axis=1, initial=-np.inf) if judged.shape[1] else np.full(len(b.lengths), -np.inf)
        self.num_rel_levels = np.where(np.isfinite(top), top + 1, 0).astype(np.int64)
        if not pairs:  # each grade is its gain: the ideal ranking is the positive grades, descending
            self.results = np.where(grades > 0, grades, 0.0)
            self.ideal = np.where(judged > 0, judged, 0.0)
            self.length = (judged > 0).sum(axis=1)
            return
        self.results = np.zeros(grades.shape)
        ideals: list[list[float]] = [[] for _ in range(len(b.lengths))]
        for nrl in np.unique(self.num_rel_levels).tolist():
            rows = np.flatnonzero(self.num_rel_levels == nrl)
            table = gain_table(pairs, nrl)
            labels = grades[rows]
            known = np.isfinite(labels)
            lookup = {v: table.gain(int(v)) for v in np.unique(labels[known]).tolist()}
            mapped = np.zeros(labels.shape)
            mapped[known] = [lookup[v] for v in labels[known].tolist()]
            self.results[rows] = mapped
            for r in rows.tolist():
                row = judged[r][np.isfinite(judged[r])].astype(np.int64)
                levels, counts = np.unique(row, return_counts=True)
                ideals[r] = table.ideal(dict(zip(levels.tolist(), counts.tolist())))
        self.length = np.array([len(g) for g in ideals], np.int64)
        self.ideal = np.zeros((len(ideals), int(self.length.max(initial=0))))
        for r, g in enumerate(ideals):
            self.ideal[r, :len(g)] = g

    def cumulative(self) -> tuple[np.ndarray, np.ndarray]:
        """(rdcg, idcg): running DCG of the ranking and of the ideal ranking, left to right."""
        rd = np.cumsum(self.results / log2_ranks(self.results.shape[1]), axis=1)
        idl = np.cumsum(self.ideal / log2_ranks(self.ideal.shape[1]), axis=1)
        return rd, idl


def _gains(b: Block, values: tuple) -> Gains:
    cache = b.__dict__.setdefault("_gains", {})
    if values not in cache:
        cache[values] = Gains(b, values)
    return cache[values]


def _last(running: np.ndarray) -> np.ndarray:
    return running[:, -1] if running.shape[1] else np.zeros(running.shape[0])


def _at(running: np.ndarray, index: np.ndarray) -> np.ndarray:
    """running[row, index] per row, 0 where index < 0."""
    if not running.shape[1]:
        return np.zeros(len(index))
    value = running[np.arange(len(index)), np.clip(index, 0, running.shape[1] - 1)]
    return np.where(index >= 0, value, 0.0)


def _ndcg(b: Block, values: tuple):
    g = _gains(b, values)
    rd, idl = row_sum(g.results / log2_ranks(g.results.shape[1])), row_sum(g.ideal / log2_ranks(g.ideal.shape[1]))
    return [np.where(idl > 0.0, _divide(rd, idl), 0.0)]


def _dcg(b: Block, values: tuple):
    g = _gains(b, values)
    return [row_sum(g.results / log2_ranks(g.results.shape[1]))]


def _ideal_dcg(b: Block, values: tuple):
    g = _gains(b, values)
    return [row_sum(g.ideal / log2_ranks(g.ideal.shape[1]))]


def _ndcg_rel(b: Block, values: tuple):
    """sum over retrieved r_i > 0 of rdcg_i / idcg_min(i, L-1), plus (L - that count) x
    rdcg / idcg at the end; over L, when positive."""
    g = _gains(b, values)
    rd, idl = g.cumulative()
    width = rd.shape[1]
    ideal_at = np.zeros(rd.shape)
    if idl.shape[1] and width:
        cols = np.minimum(np.arange(width)[None, :], g.length[:, None] - 1)
        ideal_at = np.where(cols >= 0, np.take_along_axis(idl, np.maximum(cols, 0), axis=1), 0.0)
    positive = g.results > 0
    terms = np.where(positive, _divide(rd, ideal_at), 0.0)
    total = row_sum(terms)
    final_r, final_i = _last(rd), _at(idl, g.length - 1)
    total = total + _divide((g.length - positive.sum(axis=1)) * final_r, final_i)
    return [np.where(total > 0.0, _divide(total, g.length), 0.0)]


def _rndcg(b: Block, values: tuple):
    """The mean of rdcg / idcg where the ideal gain changes (at positions p = 1..L, with the
    ranking's DCG before p), and at the end of the ranking when it is longer than L + 1."""
    g = _gains(b, values)
    rd, idl = g.cumulative()
    n, m = g.ideal.shape
    ideal = np.concatenate([g.ideal, np.zeros((n, 1))], axis=1)
    p = np.arange(1, m + 1)[None, :]
    change = (ideal[:, 1:] != ideal[:, :-1]) & (p <= g.length[:, None])
    before = np.minimum(p, b.lengths[:, None]) - 1  # the ranking's DCG just before position p
    r_at = np.take_along_axis(rd, np.clip(before, 0, max(rd.shape[1] - 1, 0)), axis=1) if rd.shape[1] else \
        np.zeros((n, m))
    r_at = np.where(before >= 0, r_at, 0.0)
    terms = np.where(change, _divide(r_at, idl), 0.0) if m else np.zeros((n, 0))
    total = row_sum(terms)
    count = change.sum(axis=1)
    tail = (g.length > 0) & (g.length + 1 < b.lengths)
    total = np.where(tail, total + _divide(_last(rd), _at(idl, g.length - 1)), total)
    count = count + tail
    return [np.where(b.R == 0, 0.0, _divide(total, count))]


def _G(b: Block, values: tuple):
    """sum of r_i / log2(2 + cost_i - gained_i) over r_i != 0, over the ideal's total gain:
    cost_i = sum of max(g_j, 1) (1 past the ideal), gained_i = sum of r_j, j <= i."""
    g = _gains(b, values)
    width = g.results.shape[1]
    ideal = np.zeros((len(b.lengths), width))
    take = min(width, g.ideal.shape[1])
    ideal[:, :take] = g.ideal[:, :take]
    cost = np.where(ideal >= 1.0, ideal, 1.0)
    cost_sum, gained = np.cumsum(cost, axis=1), np.cumsum(g.results, axis=1)
    nonzero = g.results != 0
    terms = np.zeros(g.results.shape)
    if nonzero.any():
        terms[nonzero] = _divide(g.results[nonzero], c_log2((2 + cost_sum[nonzero]) - gained[nonzero]))
    total, ideal_total = row_sum(terms), row_sum(g.ideal)
    return [np.where(ideal_total > 0.0, _divide(total, ideal_total), 0.0)]


def rbp_persistence(values: tuple) -> float:
    p = 0.9
    for name, value in values:
        if name == "p":
            p = value
    return p


def powers(p: float, width: int) -> np.ndarray:
    """1, p, p*p, ... multiplied one step at a time as trec_eval does (width + 1 of them)."""
    steps = np.full(width + 1, p)
    steps[0] = 1.0
    return np.multiply.accumulate(steps)


def _rbp(b: Block, values: tuple):
    """(1 - p) sum r_i p^i, with gains scaled to [0, 1] by (r - min) / (max - min) when some gain
    is outside it (min and max over 0 and every table gain: m_rbp.c starts them unset, 0 here)."""
    p = rbp_persistence(values)
    pairs = integer_gains(values)
    g = _gains(b, values)
    scaled = g.results.copy()
    for nrl in np.unique(g.num_rel_levels).tolist():
        rows = np.flatnonzero(g.num_rel_levels == nrl)
        gains = [e.gain for e in gain_table(pairs, nrl).entries]
        low, high = min([0.0, *gains]), max([0.0, *gains])
        if low < 0 or high > 1:
            known = g.results[rows] != 0  # get_gain's 0 for a level with no entry is not scaled
            labelled = np.isfinite(b.grades[rows]) & (known | _has_entry(b.grades[rows], pairs, nrl))
            scaled[rows] = np.where(labelled, (g.results[rows] - low) / (high - low), 0.0)
    width = scaled.shape[1]
    weights = powers(p, width)[None, :width]
    return [(1.0 - p) * row_sum(np.where(scaled != 0, scaled * weights, 0.0))]


def _has_entry(labels: np.ndarray, pairs: tuple, nrl: int) -> np.ndarray:
    """Whether the gain table has an entry for each label (its gain is then scaled, even 0)."""
    levels = np.array(sorted({e.level for e in gain_table(pairs, nrl).entries}), np.float64)
    return np.isin(labels, levels)


GAIN_COMPUTE = {"ndcg": _ndcg, "dcg": _dcg, "ideal_dcg": _ideal_dcg, "ndcg_rel": _ndcg_rel, "Rndcg": _rndcg, "G": _G,
                "rbp": _rbp}
