"""``live/prometheus.py``: the gauges read a watcher's windows, counts and judge figures."""

from __future__ import annotations

from types import SimpleNamespace

from ragmeter.live.prometheus import Gauges


def test_the_gauges_hold_the_watchers_figures():
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    watched = SimpleNamespace(
        counts={"lines": 5, "malformed": 1}, alerts_total=2,
        judge=SimpleNamespace(stats=SimpleNamespace(calls=4, latency_s=2.0)),
        window_summary=lambda which="last_n": {"faithfulness": {"mean": 0.75 if which == "last_n" else None,
                                                               "scored": 3, "not_computed": 1, "failed": 0}})
    Gauges(registry).update(watched)
    value = registry.get_sample_value
    assert value("ragmeter_rolling_mean", {"metric": "faithfulness", "window": "last_n"}) == 0.75
    assert value("ragmeter_rolling_mean", {"metric": "faithfulness", "window": "last_hour"}) is None  # no mean yet
    assert value("ragmeter_rolling_samples", {"metric": "faithfulness", "window": "last_hour",
                                              "status": "not_computed"}) == 1
    assert value("ragmeter_log_lines", {"outcome": "malformed"}) == 1
    assert (value("ragmeter_judge_calls"), value("ragmeter_judge_latency_seconds_avg")) == (4, 0.5)
    assert value("ragmeter_alerts_fired") == 2
