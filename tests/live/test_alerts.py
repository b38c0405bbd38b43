"""``live/alerts.py``: an alert's message past a bar or after a significant move, in the metric's
direction, the permutation test behind the move, firing once per crossing, and the alert command."""

from __future__ import annotations

import sys

import numpy as np

from ragmeter.live.alerts import Alert, newly_fired, run_alert_command, two_sample_p


def test_a_floor_and_a_ceiling_follow_the_metrics_direction():
    assert Alert("faithfulness", below=0.8).message(0.7, [0.7]) == "faithfulness rolling mean 0.700 is below 0.8"
    assert Alert("faithfulness", below=0.8).message(0.9, [0.9]) is None
    ceiling = Alert("contradiction_rate", above=0.1, higher_is_better=False)
    assert ceiling.message(0.2, [0.2]) == "contradiction_rate rolling mean 0.200 is above 0.1 (lower is better)"


def test_a_drop_from_the_baseline_alerts_only_when_large_and_significant():
    baseline = [0.9, 0.95, 0.92, 0.88, 0.91, 0.93]
    low = [0.5, 0.55, 0.52, 0.48, 0.51, 0.53]
    alert = Alert("faithfulness", baseline=baseline, max_drop=0.1)
    assert alert.message(float(np.mean(low)), low) == (
        f"faithfulness rolling mean {np.mean(low):.3f} dropped {np.mean(baseline) - np.mean(low):.3f} from the "
        f"baseline {np.mean(baseline):.3f} (significant)")
    assert alert.message(0.5, [0.5]) is None  # one value: no test can find the drop significant
    rising = Alert("contradiction_rate", baseline=low, max_drop=0.1, higher_is_better=False)
    assert "rose (lower is better)" in rising.message(float(np.mean(baseline)), baseline)


def test_the_permutation_test_against_its_exact_value():
    """Two samples of two: of the 24 orderings of the pooled values, the 2 * 2 * 2 = 8 that keep
    {1, 2} apart from {3, 4} give a difference as large as the observed 2, so p = 8/24 = 1/3;
    2,000 seeded shuffles land near it, the same every time."""
    p = two_sample_p([1.0, 2.0], [3.0, 4.0])
    assert abs(p - 1 / 3) < 0.03 and p == two_sample_p([1.0, 2.0], [3.0, 4.0])
    assert two_sample_p([1.0], [2.0, 3.0]) == 1.0  # too few to test


def _window(*values: float | None) -> list[dict]:
    return [{"metrics": {"m": {"status": "scored", "value": v} if v is not None else {"status": "failed"}}}
            for v in values]


def test_an_alert_fires_once_per_crossing_and_is_rearmed_back_within_its_bar():
    alert = Alert("m", below=0.5)
    low, high = {"m": {"mean": 0.25}}, {"m": {"mean": 0.75}}
    assert newly_fired([alert], low, _window(0.25, None)) == ["m rolling mean 0.250 is below 0.5"]
    assert newly_fired([alert], low, _window(0.25)) == []  # still firing: said once
    assert newly_fired([alert], high, _window(0.75)) == [] and not alert.firing
    assert newly_fired([alert], low, _window(0.25)) == ["m rolling mean 0.250 is below 0.5"]
    assert newly_fired([alert], {"m": {"mean": None}}, []) == [] and alert.firing  # no mean: no change


def test_the_alert_command_gets_the_message_and_what_goes_wrong_is_said(tmp_path):
    out = tmp_path / "said.txt"
    script = f"import os; open({str(out)!r}, 'w').write(os.environ['RAGMETER_ALERT'])"
    assert run_alert_command(f"{sys.executable} -c \"{script}\"", "m fell") is None
    assert out.read_text() == "m fell"
    assert run_alert_command(f"{sys.executable} -c 'raise SystemExit(3)'", "m") == "alert command exited with status 3"
    assert run_alert_command("no-such-command-anywhere", "m").startswith("alert command could not run")
    assert run_alert_command("'unclosed", "m").startswith("alert command could not run")  # shlex cannot split it
