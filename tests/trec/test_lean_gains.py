"""G, dcg, ideal_dcg, ndcg_rel, Rndcg, rbp and rbp_resid (m_G.c, m_ndcg.c, m_ndcg_rel.c,
m_Rndcg.c, m_rbp.c, m_rbp_resid.c) on a topic worked by hand, through both engines.

The topic of tests/trec/test_lean_judged.py: labels -1, 2, -2, 0, 1 (x, a, d, b, c), judged
grades 2, 1, 1, 0 (a, c, e, b): gains r = 0, 2, 0, 0, 1; ideal gains g = 2, 1, 1 (L = 3).
"""

from __future__ import annotations

import math

from ragmeter.trec.lean_gains import IdealWalk, clog2

L2 = math.log2
RDCG = [0.0, 2 / L2(3), 2 / L2(3), 2 / L2(3), 2 / L2(3) + 1 / L2(6)]  # running DCG of the ranking
IDCG = [2 / L2(2), 2 / L2(2) + 1 / L2(3), 2 / L2(2) + 1 / L2(3) + 1 / L2(4)]  # of the ideal one


def test_dcg_ideal_dcg_and_ndcg_by_hand(scored):
    got = scored("dcg", "ideal_dcg", "ndcg")
    assert (got["dcg"], got["ideal_dcg"]) == (RDCG[-1], IDCG[-1])
    assert got["ndcg"] == RDCG[-1] / IDCG[-1]


def test_G_by_hand(scored):
    # cost per rank: max(g_i, 1), 1 past the ideal ranking: 2, 1, 1, 1, 1 -> 2, 3, 4, 5, 6; gained: 0, 2, 2, 2, 3
    assert scored("G")["G"] == (2 / L2(2 + 3 - 2) + 1 / L2(2 + 6 - 3)) / (2 + 1 + 1)


def test_ndcg_rel_by_hand(scored):
    # a (rank 2) and c (rank 5) are found; e is not: it takes the DCG ratio at the end
    total = RDCG[1] / IDCG[1] + RDCG[4] / IDCG[2] + (3 - 2) * RDCG[4] / IDCG[2]
    assert scored("ndcg_rel")["ndcg_rel"] == total / 3


def test_Rndcg_by_hand(scored):
    # the ideal gain changes at p = 1 (2 -> 1) and p = 3 (1 -> 0); the ranking (5) is longer than L + 1 = 4
    assert scored("Rndcg")["Rndcg"] == (RDCG[0] / IDCG[0] + RDCG[2] / IDCG[2] + RDCG[4] / IDCG[2]) / 3


def test_rbp_by_hand(scored):
    # gains 0, 1, 2 lie outside [0, 1]: scaled by (g - 0) / (2 - 0)
    assert scored("rbp")["rbp"] == (1 - 0.9) * (1.0 * 0.9 + 0.5 * (0.9 * 0.9 * 0.9 * 0.9))
    assert scored("rbp.p=0.5")["rbp_p=0.5"] == (1 - 0.5) * (1.0 * 0.5 + 0.5 * 0.5 ** 4)


def test_rbp_resid_by_hand(scored):
    # unjudged at ranks 1 (x) and 3 (d)
    p = 0.9
    assert scored("rbp_resid")["rbp_resid"] == p * p * p * p * p + (1 - p) * (1 + p * p)  # p^i multiplied up


def test_gain_pairs_change_the_gains(scored):
    # ndcg.2=4: a's gain is 4; the ideal ranking is 4, 1, 1
    assert scored("dcg.2=4")["dcg_2=4"] == 4 / L2(3) + 1 / L2(6)
    assert scored("ideal_dcg.2=4")["ideal_dcg_2=4"] == 4 / L2(2) + 1 / L2(3) + 1 / L2(4)


def test_the_ideal_walk_skips_empty_levels():
    from ragmeter.trec.gains import gain_table

    table = gain_table((), 4)
    walk = IdealWalk(table, table.counts({0: 2, 1: 0, 2: 1, 3: 1}))
    seen = []
    for _ in range(4):
        walk.step()
        seen.append(walk.gain)
    assert seen == [3.0, 2.0, 0.0, 0.0]  # grade 1 has no document; grade 0 ends the ideal ranking


def test_clog2_is_c_at_zero_and_below():
    assert clog2(8.0) == 3.0 and clog2(0.0) == -math.inf and math.isnan(clog2(-1.0))
