"""Alerts on a watched metric: its rolling mean past a floor (a ceiling, for a lower-is-better
metric), or a significant move from a baseline run's mean: a fall (a rise) larger than
``max_drop`` that a two-sample permutation test (2,000 seeded permutations of the pooled values;
Good 2005, *Permutation, Parametric and Bootstrap Tests of Hypotheses*) finds at p < 0.05.
An alert fires once per crossing (:func:`newly_fired`), and may run the user's ``--alert-command``
(:func:`run_alert_command`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter.core.settings import DEFAULTS


@dataclass
class Alert:
    metric: str
    below: float | None = None  # a floor on the last-N mean (higher-is-better metrics)
    baseline: list[float] | None = None  # a baseline run's values: drift check
    max_drop: float = DEFAULTS.watch.max_drop  # a fall (a rise, for lower-is-better metrics) larger than this
    firing: bool = False
    above: float | None = None  # a ceiling on the last-N mean (lower-is-better metrics)
    higher_is_better: bool = True  # the metric's direction, set by the watcher from its spec

    def message(self, mean: float, values: Sequence[float]) -> str | None:
        """Why this alert fires for a rolling ``mean`` over ``values``, or None."""
        message = None
        if self.below is not None and mean < self.below:
            message = f"{self.metric} rolling mean {mean:.3f} is below {self.below}"
        if self.above is not None and mean > self.above:
            message = f"{self.metric} rolling mean {mean:.3f} is above {self.above} (lower is better)"
        if self.baseline:
            base = float(np.mean(self.baseline))
            drop = base - mean if self.higher_is_better else mean - base
            if drop > self.max_drop and two_sample_p(self.baseline, values) < 0.05:
                moved = "dropped" if self.higher_is_better else "rose (lower is better)"
                message = (f"{self.metric} rolling mean {mean:.3f} {moved} {drop:.3f} from the baseline "
                           f"{base:.3f} (significant)")
        return message


def two_sample_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Permutation test of equal means for two independent samples (seeded)."""
    x, y = np.asarray(a, float), np.asarray(b, float)
    if len(x) < 2 or len(y) < 2:
        return 1.0
    pooled = np.concatenate([x, y])
    observed = abs(x.mean() - y.mean())
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(2000):
        rng.shuffle(pooled)
        hits += abs(pooled[:len(x)].mean() - pooled[len(x):].mean()) >= observed - 1e-12
    return hits / 2000


def newly_fired(alerts: Iterable[Alert], summary: Mapping[str, Mapping[str, Any]], recent: Iterable[Mapping[str, Any]]
          ) -> list[str]:
    """The messages of the alerts that fire now: past their bar on the rolling window (``summary``:
    each metric's mean; ``recent``: the window's records) and not firing already; an alert back
    within its bar is re-armed."""
    out = []
    for a in alerts:
        mean = summary.get(a.metric, {}).get("mean")
        if mean is None:
            continue
        values = [r["metrics"][a.metric]["value"] for r in recent
                  if r["metrics"].get(a.metric, {}).get("status") == "scored"]
        message = a.message(mean, values)
        if message and not a.firing:
            a.firing = True
            out.append(message)
        elif not message:
            a.firing = False
    return out


def run_alert_command(command: str, message: str) -> str | None:
    """Run ``--alert-command`` with the user's environment plus ``RAGMETER_ALERT``, without a
    shell (split by :func:`shlex.split`, nothing expanded: ``sh -c '...'`` for a shell line);
    returns what went wrong for a command that cannot start, fails or hangs (never fatal), else None."""
    try:
        done = subprocess.run(shlex.split(command), env={**os.environ, "RAGMETER_ALERT": message},
                              check=False, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, ValueError) as exc:
        return f"alert command could not run: {exc}"
    except subprocess.TimeoutExpired:
        return "alert command did not finish within 30 s (stopped)"
    return f"alert command exited with status {done.returncode}" if done.returncode else None
