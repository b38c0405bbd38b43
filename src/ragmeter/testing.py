"""Assertions for test suites: ``assert_metrics(dataset, {"recall@5": 0.7}, judge=...)``.

Also available as the ``assert_metrics`` fixture of ragmeter's pytest plugin. Each bar follows
its metric's direction: a floor for a higher-is-better metric (``recall@5 0.778 >= 0.700 ok``),
a ceiling for a lower-is-better one (``contradiction_rate 0.000 <= 0.100 ok``). A failure shows
a readable table: every bar with its verdict, each metric that missed its bar with its mean,
and the samples on the wrong side of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.analysis.thresholds import Threshold
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.settings import DEFAULTS
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.dataset import Dataset, load_dataset


def threshold_problems(result: EvaluationResult, thresholds: Mapping[str, float], *,
                       max_rows: int = 10) -> tuple[list[str], list[str]]:
    """(one verdict line per bar, a paragraph per bar missed) for ``result``'s means."""
    lines, problems = [], []
    for name, bar in thresholds.items():
        key = result.measure(name)  # the name as written, resolved (aliases, default k)
        summary = result.summary(key)
        t = Threshold(name, float(bar), key.spec.higher_is_better)
        lines.append(t.line(summary.mean))
        if summary.mean is None:
            problems.append(f"{name}: nothing scored ({summary.not_computed} not computed, {summary.failed} failed: "
                            f"{'; '.join(summary.reasons) or 'no reason'})")
            continue
        if t.met(summary.mean):
            continue
        beyond = [(s.id, o.value) for s, o in zip(result.samples, result[key])
                  if o.value is not None and t.beyond(o.value)]
        beyond.sort(key=lambda row: row[1], reverse=not t.higher_is_better)
        rows = "\n".join(f"    {sid:<20} {value:.3f}" for sid, value in beyond[:max_rows])
        more = f"\n    ... and {len(beyond) - max_rows} more" if len(beyond) > max_rows else ""
        side, word = ("<", "below") if t.higher_is_better else (">", "above")
        problems.append(f"{name}: mean {summary.mean:.3f} {side} {bar} (a {t.kind}: "
                        f"{'higher' if t.higher_is_better else 'lower'} is better; {summary.scored} scored, "
                        f"{summary.not_computed} not computed, {summary.failed} failed); samples {word} the bar:\n"
                        f"{rows}{more}")
    return lines, problems


def assert_metrics(data: Any, thresholds: Mapping[str, float], *, judge: Any = None, corpus: Any = None,
                   k: int | None = DEFAULTS.k, max_rows: int = 10) -> EvaluationResult:
    """Evaluate ``data`` (or take an :class:`EvaluationResult` as it is) and assert each
    metric's mean meets its bar: ``mean >= bar`` when higher is better, ``mean <= bar`` when
    lower is better. Returns the result."""
    if isinstance(data, EvaluationResult):
        result = data
    else:
        dataset = data if isinstance(data, Dataset) else load_dataset(data, corpus=corpus) if isinstance(
            data, (str, bytes)) or hasattr(data, "__fspath__") else data
        result = evaluate(dataset, list(thresholds), k=k, judge=judge)
    lines, problems = threshold_problems(result, thresholds, max_rows=max_rows)
    if problems:
        raise AssertionError("ragmeter metrics missed their bar:\n" + "\n".join(f"  {line}" for line in lines)
                             + "\n" + "\n".join(problems))
    return result
