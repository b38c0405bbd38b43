"""trec_eval's gain measures for one topic, in plain Python (ports of ``m_G.c``, ``m_ndcg_rel.c``,
``m_Rndcg.c``, ``m_rbp.c`` and ``m_rbp_resid.c``; each function gives its formula), on the gain
table of :mod:`ragmeter.trec.gains`. Notation: r_i the gain of the document at rank i (0-based),
g_0, g_1, ... > 0 the ideal ranking's gains (L of them), d_i = log2(i + 2), rdcg_i and idcg_i
the running DCG of the ranking and of the ideal one."""

from __future__ import annotations

import math

from ragmeter.trec.catalog import MeasureRequest
from ragmeter.trec.gains import GainTable, gain_table
from ragmeter.trec.lean_measures import Options, c_div
from ragmeter.trec.rels import TopicRels


def clog2(x: float) -> float:
    """C's log2: -inf at 0, NaN below (math.log2 raises there)."""
    if x > 0:
        return math.log2(x)
    return -math.inf if x == 0 else -math.nan


class IdealWalk:
    """m_ndcg.c's ideal-ranking cursor: ``step()`` moves to the next position of the ideal
    ranking (the gain there in ``gain``, 0 past its end)."""

    def __init__(self, table: GainTable, counts: list[int]) -> None:
        self.gains = [e.gain for e in table.entries]
        self.counts = counts
        self.cur = len(self.gains) - 1
        self.gain = self.gains[self.cur] if self.cur >= 0 else 0.0
        self.at_level = 0

    def step(self) -> None:
        self.at_level += 1
        while self.cur >= 0 and self.at_level > self.counts[self.cur]:
            self.at_level = 1
            self.cur -= 1
            self.gain = self.gains[self.cur] if self.cur >= 0 else 0.0


def _walk(t: TopicRels, r: MeasureRequest) -> tuple[GainTable, IdealWalk]:
    table = gain_table(r.gains, t.num_rel_levels)
    return table, IdealWalk(table, table.counts(t.rel_levels))


def _G(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    """G (m_G.c): sum over r_i != 0 of r_i / log2(2 + cost_i - sum(r_j, j <= i)), cost_i = sum
    over j <= i of g_j when g_j >= 1, else 1 (1 past the ideal ranking); over sum(g)."""
    table, ideal = _walk(t, r)
    results_g = sum_results = sum_ideal = sum_cost = 0.0
    min_cost = 1.0
    i = 0
    while i < t.num_ret and ideal.gain > 0.0:
        gain = table.gain(t.labels[i])
        sum_results += gain
        ideal.step()
        if ideal.gain > 0.0:
            sum_ideal += ideal.gain
        sum_cost += ideal.gain if ideal.gain >= min_cost else min_cost
        if gain != 0:
            results_g += c_div(gain, clog2(2 + sum_cost - sum_results))
        i += 1
    while i < t.num_ret:
        gain = table.gain(t.labels[i])
        sum_results += gain
        sum_cost += min_cost
        if gain != 0:
            results_g += c_div(gain, clog2(2 + sum_cost - sum_results))
        i += 1
    while ideal.gain > 0.0:
        ideal.step()
        if ideal.gain > 0.0:
            sum_ideal += ideal.gain
    return [results_g / sum_ideal if sum_ideal > 0.0 else 0.0]


def _ndcg_rel(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    """ndcg_rel (m_ndcg_rel.c): nDCG averaged over the relevant documents: sum over r_i > 0 of
    rdcg_i / idcg_min(i, L-1), plus, for each of the L - n (n = retrieved r_i > 0) not found,
    rdcg / idcg at the end; over L (0 unless that sum is positive)."""
    table, ideal = _walk(t, r)
    results_dcg = ideal_dcg = total = 0.0
    num_rel_ret = num_rel = 0
    i = 0
    while i < t.num_ret and ideal.gain > 0.0:
        gain = table.gain(t.labels[i])
        if gain != 0:
            results_dcg += gain / math.log2(i + 2)
        ideal.step()
        if ideal.gain > 0.0:
            num_rel += 1
            ideal_dcg += ideal.gain / math.log2(i + 2)
        if gain > 0:
            total += c_div(results_dcg, ideal_dcg)
            num_rel_ret += 1
        i += 1
    while i < t.num_ret:
        gain = table.gain(t.labels[i])
        if gain != 0:
            results_dcg += gain / math.log2(i + 2)
        if gain > 0:
            total += c_div(results_dcg, ideal_dcg)
            num_rel_ret += 1
        i += 1
    while ideal.gain > 0.0:
        ideal.step()
        if ideal.gain > 0.0:
            num_rel += 1
            ideal_dcg += ideal.gain / math.log2(i + 2)
        i += 1
    total += c_div((num_rel - num_rel_ret) * results_dcg, ideal_dcg)  # C: (double) n * dcg / ideal
    return [c_div(total, num_rel) if total > 0.0 else 0.0]


def _Rndcg(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    """Rndcg (m_Rndcg.c): nDCG averaged at the R-levels, the positions p where the ideal gain
    changes (g_p != g_p-1, p <= L): rdcg_p-1 / idcg_p-1 at each (the ranking's DCG stops at its
    end), and rdcg / idcg at the end of a ranking longer than L + 1; 0 when R = 0."""
    table, ideal = _walk(t, r)
    if t.num_rel == 0:
        return [0.0]
    results_dcg = ideal_dcg = total = 0.0
    old = ideal.gain
    changes = 0
    i = 0
    while i < t.num_ret and ideal.gain > 0.0:
        gain = table.gain(t.labels[i])
        ideal.step()
        if old != ideal.gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old = ideal.gain
        if gain != 0:
            results_dcg += gain / math.log2(i + 2)
        if ideal.gain > 0.0:
            ideal_dcg += ideal.gain / math.log2(i + 2)
        i += 1
    if i < t.num_ret:
        while i < t.num_ret:
            gain = table.gain(t.labels[i])
            if gain != 0:
                results_dcg += gain / math.log2(i + 2)
            i += 1
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            changes += 1
    while ideal.gain > 0.0:
        ideal.step()
        if old != ideal.gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old = ideal.gain
        if ideal.gain > 0.0:
            ideal_dcg += ideal.gain / math.log2(i + 2)
        i += 1
    return [c_div(total, changes)]


def rbp_persistence(r: MeasureRequest) -> float:
    """p: the last ``p=`` pair, 0.9 by default."""
    p = 0.9
    for name, value in r.values:
        if name == "p":
            p = value
    return p


def _rbp(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    """rbp (m_rbp.c, Moffat and Zobel 2008): (1 - p) sum(r_i p^i), p = 0.9 or ``p=``; gains
    scaled by (g - min) / (max - min) when one is outside [0, 1] (min and max start unset in C:
    at 0 here, which is what the binary prints)."""
    p = rbp_persistence(r)
    table = gain_table(r.gains, t.num_rel_levels)
    gains = [e.gain for e in table.entries]
    low, high = min([0.0, *gains]), max([0.0, *gains])  # m_rbp.c reads min and max uninitialised: 0 here
    if low < 0 or high > 1:
        scaled = {e.level: (e.gain - low) / (high - low) for e in reversed(table.entries)}
    else:
        scaled = {e.level: e.gain for e in reversed(table.entries)}
    total, cur_p = 0.0, 1.0
    for lab in t.labels:
        gain = scaled.get(lab, 0.0)
        if gain != 0:
            total += gain * cur_p
        cur_p = cur_p * p
    return [(1.0 - p) * total]


def _rbp_resid(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    """rbp_resid (m_rbp_resid.c): p^num_ret + (1 - p) sum of p^i over the unjudged ranks (-1,
    -2): how far rbp could rise if every unjudged document had gain 1; 0 with none."""
    p = rbp_persistence(r)
    unj, total, cur_p = 0, 0.0, 1.0
    for lab in t.labels:
        if lab < 0:
            unj += 1
            total += cur_p
        cur_p = cur_p * p
    return [cur_p + (1 - p) * total if unj else 0.0]


GAIN_MEASURES = {"G": _G, "ndcg_rel": _ndcg_rel, "Rndcg": _Rndcg, "rbp": _rbp, "rbp_resid": _rbp_resid}
