"""The plain-Python ports of trec_eval's qrels measures (m_*.c): C's arithmetic where it differs
from Python's, and measures worked by hand."""

from __future__ import annotations

import math

from ragmeter.trec.catalog import parse_requests
from ragmeter.trec.lean_measures import QRELS_MEASURES, Options, c_div, lround
from ragmeter.trec.rels import NONPOOL, TopicRels


def topic(labels: list[int], levels: dict[int, int]) -> TopicRels:
    level = 1
    judged = [lab for lab in labels if lab >= 0]
    return TopicRels(labels, sum(c for g, c in levels.items() if g >= level), sum(lab >= level for lab in judged),
                     labels.count(NONPOOL), labels.count(-2), levels)


def value(name: str, t: TopicRels, **options) -> list:
    request = parse_requests([name])[0]
    return QRELS_MEASURES[request.name](t, request, Options(**options))


def test_lround_rounds_halves_away_from_zero_and_nothing_else_up():
    assert [lround(x) for x in (0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 2.4)] == [1, 2, 3, -1, -3, 0, 2]


def test_c_division():
    assert c_div(1.0, 0.0) == math.inf and c_div(-1.0, 0.0) == -math.inf and math.isnan(c_div(0.0, 0.0))


def test_map_and_bpref_by_hand():
    # ranking: rel, unjudged (not in pool), nonrel, rel; R = 3 (one relevant document not retrieved)
    t = topic([1, NONPOOL, 0, 1], {0: 2, 1: 3})
    assert value("map", t) == [(1 / 1 + 2 / 4) / 3]
    # bpref: the first relevant has no non-relevant above (1); the second has 1 of min(N=2, R=3)
    assert value("bpref", t) == [(1.0 + (1 - 1 / 2)) / 3]


def test_interpolated_precision_uses_lround_v10_and_the_plus_09_rule_v9():
    t = topic([1, 0, 1, 0, 0, 1], {0: 3, 1: 4})  # R = 4: 0.1 * 4 rounds to 0 (v10) but to 1 (v9)
    v10 = value("iprec_at_recall.0.1", t)
    v9 = value("iprec_at_recall.0.1", t, iprec_rule="v9")
    assert v10 == v9 == [1.0]  # both take the precision at the first relevant document here
    assert value("iprec_at_recall.0.5", t) == [2 / 3]  # c = 2: the best precision from rank 3 on


def test_ndcg_cut_by_hand():
    t = topic([2, 0, 1], {0: 1, 1: 1, 2: 1})
    ideal2 = 2 / math.log2(2) + 1 / math.log2(3)
    assert value("ndcg_cut.2", t) == [(2 / math.log2(2)) / ideal2]
