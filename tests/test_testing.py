"""Direction-aware thresholds, over the whole metric registry: a lower-is-better metric
(``higher_is_better=False``) passes a ceiling its mean meets and fails one it misses, in
``assert_metrics``, ``ragmeter gate`` and ``watch`` alerts; a higher-is-better metric does the
same with floors. The bar on the wrong side is refused with the fix."""

from __future__ import annotations

import re

import pytest

from ragmeter import Sample
from ragmeter.analysis.compare import compare_runs
from ragmeter.analysis.gate import gate
from ragmeter.analysis.thresholds import Threshold
from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.results import Provenance, Score
from ragmeter.core.settings import InvalidSettingError
from ragmeter.live.alerts import Alert
from ragmeter.live.loop import parse_alert
from ragmeter.live.watch import Watcher
from ragmeter.metrics import REGISTRY, make_measure
from ragmeter.report.terminal import comparison_text
from ragmeter.testing import assert_metrics
from tests.analysis.test_compare import make_run

VALUES = [0.2, 0.4, 0.3, 0.5, 0.1]  # mean 0.3
MEAN = sum(VALUES) / len(VALUES)
MET = {True: 0.25, False: 0.35}  # a bar the mean meets: a floor under it, a ceiling over it
MISSED = {True: 0.35, False: 0.25}


def measure_of(spec):
    params = {"criterion": "clarity"} if spec.name == "rubric" else {}
    return make_measure(spec.name, k=5 if spec.accepts_k else None, **params)


MEASURES = [measure_of(spec) for spec in REGISTRY.values()]
IDS = [str(m) for m in MEASURES]


def test_the_registry_holds_lower_is_better_metrics():
    lower = {m.name for m in MEASURES if not m.spec.higher_is_better}
    assert {"contradiction_rate", "hallucination", "noise_sensitivity", "false_refusal"} <= lower


def result_for(measure) -> EvaluationResult:
    prov = Provenance(str(measure), measure.name, measure.spec.version, dict(measure.params), measure.k,
                      measure.view, "test")
    samples = tuple(Sample(f"q{i}", retrieved=()) for i in range(len(VALUES)))
    return EvaluationResult(samples, (measure,), {measure: tuple(Score(v, prov) for v in VALUES)}, "fp")


@pytest.mark.parametrize("measure", MEASURES, ids=IDS)
def test_assert_metrics_follows_the_direction(measure):
    higher = measure.spec.higher_is_better
    result = result_for(measure)
    assert assert_metrics(result, {str(measure): MET[higher]}) is result
    with pytest.raises(AssertionError) as missed:
        assert_metrics(result, {str(measure): MISSED[higher]})
    op = ">=" if higher else "<="
    text = str(missed.value)
    assert f"{measure} {MEAN:.3f} {op} {MISSED[higher]:.3f} FAILED" in text
    assert ("below the bar" if higher else "above the bar") in text
    listed = {line.split()[0] for line in text.split("the bar:\n")[1].splitlines()}
    assert listed == {f"q{i}" for i, v in enumerate(VALUES) if (v < MISSED[higher] if higher else v > MISSED[higher])}


@pytest.mark.parametrize("measure", MEASURES, ids=IDS)
def test_gate_follows_the_direction(measure, tmp_path):
    higher = measure.spec.higher_is_better
    key = str(measure)
    run = make_run(tmp_path / "run", {key: VALUES})
    bars = "floors" if higher else "ceilings"
    wrong = "ceilings" if higher else "floors"
    passed = gate(run, run, **{bars: {key: MET[higher]}})
    assert passed.passed and passed.checks == [f"{key} {MEAN:.3f} {'>=' if higher else '<='} {MET[higher]:.3f} ok"]
    failed = gate(run, run, **{bars: {key: MISSED[higher]}})
    assert not failed.passed
    side = "below its floor" if higher else "above its ceiling"
    direction = "higher" if higher else "lower"
    assert failed.failures == [f"{key} {MEAN:.3f} is {side} {MISSED[higher]} ({direction} is better)"]
    with pytest.raises(InvalidParameterError, match="--max" if higher else "--min"):
        gate(run, run, **{wrong: {key: MET[higher]}})


@pytest.mark.parametrize("measure", MEASURES, ids=IDS)
def test_watch_alerts_follow_the_direction(measure, tmp_path):
    higher = measure.spec.higher_is_better
    key = str(measure)

    def fired(alert: Alert) -> list[str]:
        w = Watcher(str(tmp_path / "log.jsonl"), None, tmp_path / "state", metrics=[key], alerts=[alert])
        for i, v in enumerate(VALUES):
            w.recent.append({"id": f"r{i}", "ts": 0.0, "metrics": {key: {"status": "scored", "value": v}}})
        w._check_alerts()
        return w.fired

    op = "<" if higher else ">"
    assert fired(parse_alert(f"{key}{op}{MET[higher]}")) == []
    message = fired(parse_alert(f"{key}{op}{MISSED[higher]}"))
    assert message == [f"{key} rolling mean {MEAN:.3f} is {'below' if higher else 'above'} {MISSED[higher]}"
                       + ("" if higher else " (lower is better)")]
    other = ">" if higher else "<"
    with pytest.raises(InvalidSettingError, match=re.escape(f"give a {'floor' if higher else 'ceiling'}, "
                                                            f"--alert '{key}{op}{MET[higher]}'")):
        fired(parse_alert(f"{key}{other}{MET[higher]}"))


def test_a_perfect_contradiction_rate_passes_its_ceiling():
    """The issue's case: 0.0 failed a 0.1 bar when every bar was a floor."""
    t = Threshold("contradiction_rate", 0.1, higher_is_better=False)
    assert t.met(0.0) and t.line(0.0) == "contradiction_rate 0.000 <= 0.100 ok"
    assert not t.met(0.2) and t.line(0.2) == "contradiction_rate 0.200 <= 0.100 FAILED"


def test_gate_drift_on_a_lower_is_better_metric_is_a_rise(tmp_path):
    low, high = [0.0] * 40, [0.5] * 40
    base = make_run(tmp_path / "base", {"contradiction_rate": low})
    worse = make_run(tmp_path / "worse", {"contradiction_rate": high})
    better = make_run(tmp_path / "better", {"contradiction_rate": low})
    rose = gate(worse, base)
    assert not rose.passed and rose.failures[0].startswith("contradiction_rate rose (lower is better) 0.500")
    assert gate(better, worse).passed  # a fall is an improvement
    text = comparison_text(compare_runs(worse, base))
    assert "-0.500 v better" in text and "lower" in text
    assert "+0.500 ^ worse" in comparison_text(compare_runs(base, worse))


def test_watch_drift_on_a_lower_is_better_metric_is_a_rise(tmp_path):
    def fired(values, baseline):
        w = Watcher(str(tmp_path / "log.jsonl"), None, tmp_path / "s", metrics=["contradiction_rate"],
                    alerts=[Alert("contradiction_rate", baseline=baseline, max_drop=0.1)])
        for i, v in enumerate(values):
            w.recent.append({"id": f"r{i}", "ts": 0.0, "metrics": {"contradiction_rate": {"status": "scored",
                                                                                          "value": v}}})
        w._check_alerts()
        return w.fired
    assert fired([0.0] * 30, [1.0] * 30) == []  # fewer contradictions than the baseline: no alert
    rose = fired([1.0] * 30, [0.0] * 30)
    assert len(rose) == 1 and "rose (lower is better) 1.000 from the baseline 0.000" in rose[0]


def test_gate_cli_refuses_a_floor_on_a_lower_is_better_metric(cli, tmp_path):
    run = make_run(tmp_path / "r", {"contradiction_rate": [0.0] * 4, "recall@5": [1.0] * 4})
    refused = cli("gate", run.path, "--baseline", run.path, "--min", "contradiction_rate=0.1")
    assert refused.exit_code == 2 and "--max contradiction_rate=0.1" in refused.stderr
    ok = cli("gate", run.path, "--baseline", run.path, "--max", "contradiction_rate=0.1", "--min", "recall@5=0.5")
    assert ok.exit_code == 0
    assert "contradiction_rate 0.000 <= 0.100 ok" in ok.stdout and "recall@5 1.000 >= 0.500 ok" in ok.stdout
    missed = cli("gate", run.path, "--baseline", run.path, "--max", "contradiction_rate=-0.1")
    assert missed.exit_code == 1 and "contradiction_rate 0.000 <= -0.100 FAILED" in missed.stdout
    assert cli("gate", run.path, "--baseline", run.path, "--max", "recall@5=0.5").exit_code == 2
