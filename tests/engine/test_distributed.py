"""Ray's usage stats are off for the cluster evaluate_ray starts (on by default for ray.init)."""

from __future__ import annotations

from tests.installed import need


def test_ray_usage_stats_are_off(monkeypatch):
    need("ray")
    from ray._common.usage import usage_lib

    from ragmeter.engine.distributed import _ray

    monkeypatch.delenv("RAY_USAGE_STATS_ENABLED", raising=False)
    assert usage_lib._usage_stats_enabledness() is not usage_lib.UsageStatsEnabledness.DISABLED_EXPLICITLY
    _ray()
    assert usage_lib._usage_stats_enabledness() is usage_lib.UsageStatsEnabledness.DISABLED_EXPLICITLY
