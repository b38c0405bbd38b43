"""trec_eval's experimental gain measures for one topic, in plain Python (ports of ``m_G.c``,
``m_ndcg_rel.c``, ``m_Rndcg.c`` and ``m_rbp.c``); see :mod:`ragmeter.trec.definitions` for the
formulas and :mod:`ragmeter.trec.gains` for the gain table they share."""

from __future__ import annotations

import math

from ragmeter.trec.catalog import MeasureRequest
from ragmeter.trec.gains import GainTable, gain_table
from ragmeter.trec.lean_measures import Options, _div
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
            results_g += _div(gain, clog2(2 + sum_cost - sum_results))
        i += 1
    while i < t.num_ret:
        gain = table.gain(t.labels[i])
        sum_results += gain
        sum_cost += min_cost
        if gain != 0:
            results_g += _div(gain, clog2(2 + sum_cost - sum_results))
        i += 1
    while ideal.gain > 0.0:
        ideal.step()
        if ideal.gain > 0.0:
            sum_ideal += ideal.gain
    return [results_g / sum_ideal if sum_ideal > 0.0 else 0.0]


def _ndcg_rel(t: TopicRels, r: MeasureRequest, o: Options) -> list:
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
            total += _div(results_dcg, ideal_dcg)
            num_rel_ret += 1
        i += 1
    while i < t.num_ret:
        gain = table.gain(t.labels[i])
        if gain != 0:
            results_dcg += gain / math.log2(i + 2)
        if gain > 0:
            total += _div(results_dcg, ideal_dcg)
            num_rel_ret += 1
        i += 1
    while ideal.gain > 0.0:
        ideal.step()
        if ideal.gain > 0.0:
            num_rel += 1
            ideal_dcg += ideal.gain / math.log2(i + 2)
        i += 1
    total += _div((num_rel - num_rel_ret) * results_dcg, ideal_dcg)  # C: (double) n * dcg / ideal
    return [_div(total, num_rel) if total > 0.0 else 0.0]


def _Rndcg(t: TopicRels, r: MeasureRequest, o: Options) -> list:
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
    return [_div(total, changes)]


def rbp_persistence(r: MeasureRequest) -> float:
    """p: the last ``p=`` pair, 0.9 by default."""
    p = 0.9
    for name, value in r.values:
        if name == "p":
            p = value
    return p


def _rbp(t: TopicRels, r: MeasureRequest, o: Options) -> list:
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
    p = rbp_persistence(r)
    unj, total, cur_p = 0, 0.0, 1.0
    for lab in t.labels:
        if lab < 0:
            unj += 1
            total += cur_p
        cur_p = cur_p * p
    return [cur_p + (1 - p) * total if unj else 0.0]


GAIN_MEASURES = {"G": _G, "ndcg_rel": _ndcg_rel, "Rndcg": _Rndcg, "rbp": _rbp, "rbp_resid": _rbp_resid}
