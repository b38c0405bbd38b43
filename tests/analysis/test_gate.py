"""Issue 29, item 11: a gate never passes on NaN, even on runs built in Python (past the reader)."""

from __future__ import annotations

import math
from pathlib import Path

from ragmeter.analysis.gate import gate
from ragmeter.runs.store import Run


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
    import pytest

    from ragmeter.core.errors import InvalidInputError

    base = _run("base", [0.2] * 5, 0.2)
    new = _run("new", [0.2] * 5, 0.2)
    new.setup["status"] = "interrupted"
    with pytest.raises(InvalidInputError, match="not complete"):
        gate(new, base)
