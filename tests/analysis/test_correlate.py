"""``ragmeter.analysis.correlate``: Correlation between metrics across queries (Spearman), with the
pairs the seed expects to move together flagged where they diverge."""

from __future__ import annotations

import pytest
from scipy import stats

from ragmeter.analysis.correlate import correlate, spearman
from tests.analysis.test_compare import make_run


@pytest.mark.parametrize("x,y", [([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]), ([1, 1, 2, 2, 3], [3, 1, 2, 2, 9]),
                                 ([0.1, 0.5, 0.5, 0.9, 0.2, 0.3], [0.3, 0.2, 0.8, 0.8, 0.1, 0.5])])
def test_spearman_matches_scipy(x, y):
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)


def test_correlate_flags_diverging_expected_pairs(tmp_path):
    run = make_run(tmp_path / "a", {"precision@5": [0.2, 0.4, 0.6, 0.8, 1.0], "ndcg@5": [1.0, 0.8, 0.6, 0.4, 0.3],
                                    "recall@5": [0.1, 0.2, 0.3, 0.4, 0.5]})
    pairs = {(p.a, p.b): p for p in correlate(run)}
    assert pairs[("precision@5", "ndcg@5")].diverges and pairs[("precision@5", "ndcg@5")].rho == pytest.approx(-1)
    assert not pairs[("precision@5", "recall@5")].diverges and pairs[("precision@5", "recall@5")].expected is None
