"""Aggregates that never hide what was not scored: mean over scored samples, with coverage."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragmeter.core.interval import METHOD, mean_interval
from ragmeter.core.results import Outcome, Score
from ragmeter.core.score_column import ScoreColumn, exact_mean


@dataclass(frozen=True)
class MetricSummary:
    """mean = fsum(scored values) / scored; ``None`` when nothing was scored."""

    metric: str
    mean: float | None
    scored: int
    not_computed: int
    failed: int
    reasons: dict[str, int] = field(default_factory=dict)
    ci95: tuple[float, float] | None = None
    #: how ``ci95`` was drawn (:func:`~ragmeter.core.interval.mean_interval`): the measure's provenance names it
    interval: str = METHOD

    @property
    def total(self) -> int:
        return self.scored + self.not_computed + self.failed

    def as_dict(self) -> dict:
        return {"mean": self.mean, "ci95": list(self.ci95) if self.ci95 else None, "scored": self.scored,
                "not_computed": self.not_computed, "failed": self.failed, "reasons": dict(self.reasons)}


def summarize(metric: str, outcomes: Sequence[Outcome]) -> MetricSummary:
    """Mean of the scored values (``math.fsum``: exact, so sample order cannot move it),
    coverage, and a seeded 95% bootstrap interval."""
    if isinstance(outcomes, ScoreColumn):  # read from its arrays: no outcome object is built
        return summarize_column(metric, outcomes)
    values = [o.value for o in outcomes if isinstance(o, Score)]
    if len(values) == len(outcomes):  # every sample scored: nothing to count
        return summary_from(metric, values, 0, 0, {})
    return summarize_values(metric, values, outcomes)


def summarize_column(metric: str, column: ScoreColumn) -> MetricSummary:
    """:func:`summarize` of a column's outcomes, from its arrays (the same numbers)."""
    reasons = Counter(column.not_scored_reasons())
    return summary_from(metric, column.scored_values(), sum(reasons.values()), 0, reasons, mean=column.mean())


def summarize_values(metric: str, values: Sequence[float], outcomes: Sequence) -> MetricSummary:
    """The same from plain values and objects with ``status`` and ``reason``/``error``."""
    reasons = Counter(_why(o) for o in outcomes if _status(o) != "scored")
    return summary_from(metric, values, sum(_status(o) == "not_computed" for o in outcomes),
                        sum(_status(o) == "failed" for o in outcomes), reasons)


def summary_from(metric: str, values: Sequence[float] | np.ndarray, not_computed: int, failed: int,
                 reasons: Mapping[str, int], *, mean: float | None = None) -> MetricSummary:
    """The one place a summary is built (in-memory and streamed runs alike); ``mean``: the
    values' :func:`mean_of`, where the caller has it."""
    ci95, method = mean_interval(np.sort(np.asarray(values, dtype=np.float64)))
    return MetricSummary(
        metric=metric,
        mean=mean if mean is not None or not len(values) else mean_of(values),
        scored=len(values),
        not_computed=not_computed,
        failed=failed,
        reasons=dict(sorted(reasons.items())),
        ci95=ci95,
        interval=method,
    )


def mean_of(values: Sequence[float] | np.ndarray) -> float | None:
    """fsum(values) / len(values): exact, so no order of the values can move it; ``None`` if empty
    (:func:`~ragmeter.core.score_column.exact_mean`)."""
    return exact_mean(values.tolist() if isinstance(values, np.ndarray) else values)


def _status(o) -> str:
    return o["status"] if isinstance(o, dict) else o.status


def _why(o) -> str:
    if isinstance(o, dict):
        return str(o.get("reason") or o.get("error") or "")
    return str(getattr(o, "reason", None) or getattr(o, "error", ""))
