"""Assertions for test suites: ``assert_metrics(dataset, {"recall@5": 0.7}, judge=...)``.

Also available as the ``assert_metrics`` fixture of ragmeter's pytest plugin. A failure
shows a readable table: each metric below its bar with its mean, and the samples below it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.core.settings import DEFAULTS
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.dataset import Dataset, load_dataset


def assert_metrics(data: Any, thresholds: Mapping[str, float], *, judge: Any = None, corpus: Any = None,
                   k: int | None = DEFAULTS.k, max_rows: int = 10):
    """Evaluate and assert each metric's mean >= its threshold. Returns the result."""
    dataset = data if isinstance(data, Dataset) else load_dataset(data, corpus=corpus) if isinstance(
        data, (str, bytes)) or hasattr(data, "__fspath__") else data
    result = evaluate(dataset, list(thresholds), k=k, judge=judge)
    problems = []
    for name, bar in thresholds.items():
        key = result.measure(name)  # the name as written, resolved (aliases, default k)
        summary = result.summary(key)
        if summary.mean is None:
            problems.append(f"{name}: nothing scored ({summary.not_computed} not computed, {summary.failed} failed: "
                            f"{'; '.join(summary.reasons) or 'no reason'})")
            continue
        if summary.mean >= bar:
            continue
        below = [(s.id, o.value) for s, o in zip(result.samples, result[key]) if o.value is not None and o.value < bar]
        below.sort(key=lambda t: t[1])
        rows = "\n".join(f"    {sid:<20} {value:.3f}" for sid, value in below[:max_rows])
        more = f"\n    ... and {len(below) - max_rows} more" if len(below) > max_rows else ""
        problems.append(f"{name}: mean {summary.mean:.3f} < {bar} ({summary.scored} scored, "
                        f"{summary.not_computed} not computed, {summary.failed} failed); samples below the bar:\n"
                        f"{rows}{more}")
    if problems:
        raise AssertionError("ragmeter metrics below their bar:\n" + "\n".join(problems))
    return result
