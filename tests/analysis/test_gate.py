"""The gate: a gate that cannot fail says so (with n paired samples the sign-flip test's smallest
p is 2 / 2^n, and Holm over m metrics multiplies it by m; with 6 samples and 5 metrics no change
can be significant: a -0.125 MRR drop passed with --max-drop 0 and nothing said why), and a gate
never passes on NaN, even on runs built in Python (past the run reader)."""

from __future__ import annotations

import math
from itertools import product
from pathlib import Path

import pytest

from ragmeter.analysis.compare import holm, randomization_p, samples_needed, smallest_p
from ragmeter.analysis.gate import gate, markdown, text
from ragmeter.core.errors import InvalidInputError
from ragmeter.runs.store import Run
from tests.test_compare_gate import make_run

METRICS = ("precision@5", "recall@5", "hit_rate@5", "reciprocal_rank@5", "ndcg@5")


def _runs(tmp_path, n: int):
    base = {m: [1.0] * n for m in METRICS}
    new = {m: [1.0] * n for m in METRICS}
    new["reciprocal_rank@5"] = [0.5] * 2 + [1.0] * (n - 2) if n == 6 else [0.5] * n  # -0.167 at n=6
    return make_run(tmp_path / "new", new), make_run(tmp_path / "base", base)


def test_six_samples_and_five_metrics_cannot_fail_and_the_gate_says_so(tmp_path):
    run, base = _runs(tmp_path, 6)
    result = gate(run, base, max_drop=0.0)
    assert result.passed  # the test cannot reject: that is what must be said
    (note,) = result.cannot_fail
    assert note.startswith("the comparison cannot fail at this n: with at most 2 paired sample(s) that differ, "
                           "the sign-flip test's smallest p is 0.5000, and Holm over 5 metric(s) makes it 1.0000")
    assert note.endswith("It needs at least 8 samples that differ (or fewer metrics with -m, or bars: --min/--max)")
    shown = text(result, max_drop=0.0)
    assert shown.splitlines()[:2] == ["gate passed", f"  NOTE: {note}"]
    assert f"- **note**: {note}" in markdown(result)
    assert result.as_dict()["cannot_fail"] == [note]


def test_at_the_needed_n_the_same_drop_fails(tmp_path):
    run, base = _runs(tmp_path, samples_needed(5, 0.05))
    result = gate(run, base, max_drop=0.0)
    assert not result.passed and result.failures[0].startswith("reciprocal_rank@5 dropped 0.500")
    assert result.cannot_fail == []


def test_one_metric_that_cannot_be_significant_is_named(tmp_path):
    base = make_run(tmp_path / "b", {"mrr@5": [1.0] * 10, "ndcg@5": [1.0] * 10})
    run = make_run(tmp_path / "a", {"mrr@5": [0.5] * 10, "ndcg@5": [0.9] * 2 + [1.0] * 8})
    (note,) = gate(run, base, max_drop=0.0).cannot_fail
    assert note.startswith("ndcg@5 cannot be significant at this n: 2 paired sample(s) differ, so its smallest p "
                           "is 0.5000")


@pytest.mark.parametrize("n", range(1, 11))
def test_smallest_p_is_what_the_test_reaches(n):
    """The bound is exact: every diff one way reaches it, and no sign pattern goes lower."""
    assert randomization_p([0.1] * n) == pytest.approx(smallest_p(n))
    if n <= 6:
        assert min(randomization_p(list(d)) for d in product((-0.2, 0.1, 0.3), repeat=n)) >= smallest_p(n) - 1e-12


def test_samples_needed_is_the_first_n_where_holm_can_reject():
    for m, alpha in ((1, 0.05), (5, 0.05), (5, 0.01), (12, 0.05)):
        n = samples_needed(m, alpha)
        assert min(holm([smallest_p(n)] * m)) < alpha <= min(holm([smallest_p(n - 1)] * m))


def _run(name: str, values: list[float], mean: float) -> Run:
    results = [{"id": f"q{i}", "metrics": {"ndcg@5": {"status": "scored", "value": v}}} for i, v in enumerate(values)]
    summary = {"ndcg@5": {"mean": mean, "ci95": None, "scored": len(values), "not_computed": 0, "failed": 0}}
    setup = {"status": "complete", "dataset": {"testset_fingerprint": "t"},
             "metrics": {"ndcg@5": {"metric_name": "ndcg", "metric_version": 1, "params": {}, "k": 5,
                                    "view": "retrieved", "judge": None}}}
    return Run(Path(name), setup, results, summary)


def test_nan_values_fail_the_gate_instead_of_passing():
    base = _run("base", [0.2] * 30, 0.2)
    new = _run("new", [math.nan] + [0.2] * 29, math.nan)
    result = gate(new, base, max_drop=0.02)
    assert not result.passed
    assert any("not a number" in f or "not a finite number" in f for f in result.failures), result.failures


def test_a_nan_mean_fails_a_floor_and_a_ceiling():
    new = _run("new", [0.5] * 5, math.nan)
    assert not gate(new, floors={"ndcg@5": 0.1}).passed
    failures = gate(new, floors={"ndcg@5": 0.1}).failures
    assert failures == ["ndcg@5: the run's mean is not a finite number (nan)"]


def test_an_interrupted_run_is_refused_by_the_gate():
    base = _run("base", [0.2] * 5, 0.2)
    new = _run("new", [0.2] * 5, 0.2)
    new.setup["status"] = "interrupted"
    with pytest.raises(InvalidInputError, match="not complete"):
        gate(new, base)
