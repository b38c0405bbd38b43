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
from functools import cached_property

import numpy as np

from ragmeter.metrics.batch import row_sum
from ragmeter.metrics.retrieval.kernels import log2_ranks
from ragmeter.trec.gains import gain_table
from ragmeter.trec.measures import Block, c_divide, sparse_row_sum, sparse_running_sums


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
        return rd, self.ideal_running

    @cached_property
    def ideal_running(self) -> np.ndarray:
        return np.cumsum(self.ideal / log2_ranks(self.ideal.shape[1]), axis=1)

    @cached_property
    def nonzero(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, ranks, gains) of the documents with a gain, in rank order within each topic."""
        rows, cols = np.nonzero(self.results)
        return rows, cols, self.results[rows, cols]

    @cached_property
    def dcg(self) -> tuple[np.ndarray, np.ndarray]:
        """(rdcg at each document with a gain, each topic's DCG): r_i / log2(i + 2) added up."""
        rows, cols, gains = self.nonzero
        width = int(cols.max(initial=0)) + 1
        return sparse_running_sums(rows, gains / log2_ranks(width)[0, cols], len(self.length))


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


def _ideal_total(g: Gains) -> np.ndarray:
    return _last(g.ideal_running)


def _ndcg(b: Block, values: tuple):
    g = _gains(b, values)
    rd, idl = g.dcg[1], _ideal_total(g)
    return [np.where(idl > 0.0, c_divide(rd, idl), 0.0)]


def _dcg(b: Block, values: tuple):
    return [_gains(b, values).dcg[1]]


def _ideal_dcg(b: Block, values: tuple):
    return [_ideal_total(_gains(b, values))]


def _ndcg_rel(b: Block, values: tuple):
    """sum over retrieved r_i > 0 of rdcg_i / idcg_min(i, L-1), plus (L - that count) x
    rdcg / idcg at the end; over L, when positive."""
    g = _gains(b, values)
    rows, cols, gains = g.nonzero
    running, final_r = g.dcg
    idl = g.ideal_running
    ideal_at = _at(idl[rows], np.minimum(cols, g.length[rows] - 1)) if len(rows) else np.zeros(0)
    positive = gains > 0
    total = sparse_row_sum(rows[positive], c_divide(running[positive], ideal_at[positive]), len(b.lengths))
    found = np.bincount(rows[positive], minlength=len(b.lengths))
    total = total + c_divide((g.length - found) * final_r, _at(idl, g.length - 1))
    return [np.where(total > 0.0, c_divide(total, g.length), 0.0)]


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
    terms = np.where(change, c_divide(r_at, idl), 0.0) if m else np.zeros((n, 0))
    total = row_sum(terms)
    count = change.sum(axis=1)
    tail = (g.length > 0) & (g.length + 1 < b.lengths)
    total = np.where(tail, total + c_divide(_last(rd), _at(idl, g.length - 1)), total)
    count = count + tail
    return [np.where(b.R == 0, 0.0, c_divide(total, count))]


def _G(b: Block, values: tuple):
    """sum of r_i / log2(2 + cost_i - gained_i) over r_i != 0, over the ideal's total gain:
    cost_i = sum of max(g_j, 1) (1 past the ideal), gained_i = sum of r_j, j <= i."""
    g = _gains(b, values)
    rows, cols, gains = g.nonzero
    n, m = g.ideal.shape
    cost = np.where(g.ideal >= 1.0, g.ideal, 1.0)  # 1 past each topic's ideal ranking (padded with 0)
    whole = bool(np.all(np.floor(cost) == cost)) and bool(np.all(np.floor(gains) == gains))
    if whole:  # whole numbers add up exactly in any grouping: the ones past the ideal at once
        head = np.cumsum(cost, axis=1)
        past = np.maximum(cols - m + 1, 0).astype(np.float64)
        cost_sum = (head[rows, np.minimum(cols, m - 1)] if m else np.zeros(len(rows))) + past
    else:  # left to right over every rank, as trec_eval adds
        width = g.results.shape[1]
        full = np.ones((n, width))
        full[:, :min(m, width)] = cost[:, :min(m, width)]
        cost_sum = np.cumsum(full, axis=1)[rows, cols]
    gained = sparse_running_sums(rows, gains, n)[0]
    terms = c_divide(gains, c_log2((2 + cost_sum) - gained))
    total, ideal_total = sparse_row_sum(rows, terms, n), row_sum(g.ideal)
    return [np.where(ideal_total > 0.0, c_divide(total, ideal_total), 0.0)]


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
    if not pairs:  # the grades 0..top: scaled by the top grade when it is above 1
        top = (g.num_rel_levels - 1).astype(np.float64)
        scaled = np.where(top[:, None] > 1, scaled / np.maximum(top, 1.0)[:, None], scaled)
    for nrl in np.unique(g.num_rel_levels).tolist() if pairs else []:
        rows = np.flatnonzero(g.num_rel_levels == nrl)
        gains = [e.gain for e in gain_table(pairs, nrl).entries]
        low, high = min([0.0, *gains]), max([0.0, *gains])
        if low < 0 or high > 1:
            known = g.results[rows] != 0  # get_gain's 0 for a level with no entry is not scaled
            labelled = np.isfinite(b.grades[rows]) & (known | _has_entry(b.grades[rows], pairs, nrl))
            scaled[rows] = np.where(labelled, (g.results[rows] - low) / (high - low), 0.0)
    rows, cols = np.nonzero(scaled)
    weights = powers(p, scaled.shape[1])
    return [(1.0 - p) * sparse_row_sum(rows, scaled[rows, cols] * weights[cols], len(b.lengths))]


def _has_entry(labels: np.ndarray, pairs: tuple, nrl: int) -> np.ndarray:
    """Whether the gain table has an entry for each label (its gain is then scaled, even 0)."""
    levels = np.array(sorted({e.level for e in gain_table(pairs, nrl).entries}), np.float64)
    return np.isin(labels, levels)


GAIN_COMPUTE = {"ndcg": _ndcg, "dcg": _dcg, "ideal_dcg": _ideal_dcg, "ndcg_rel": _ndcg_rel, "Rndcg": _rndcg, "G": _G,
                "rbp": _rbp}
