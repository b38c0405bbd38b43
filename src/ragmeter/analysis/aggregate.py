"""Aggregates that never hide what was not scored: mean over scored samples, with coverage."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from ragmeter.core.results import Outcome, Score


@dataclass(frozen=True)
class MetricSummary:
    """mean = fsum(scored values) / scored; ``None`` when nothing was scored."""

    metric: str
    mean: float | None
    scored: int
    not_computed: int
    failed: int
    reasons: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.scored + self.not_computed + self.failed

    def as_dict(self) -> dict:
        return {"mean": self.mean, "scored": self.scored, "not_computed": self.not_computed,
                "failed": self.failed, "reasons": dict(self.reasons)}


def summarize(metric: str, outcomes: Sequence[Outcome]) -> MetricSummary:
    """Mean of the scored values (``math.fsum``: exact, so sample order cannot move it)."""
    values = [o.value for o in outcomes if isinstance(o, Score)]
    reasons = Counter(getattr(o, "reason", None) or getattr(o, "error", "") for o in outcomes if not isinstance(o, Score))
    return MetricSummary(
        metric=metric,
        mean=math.fsum(values) / len(values) if values else None,
        scored=len(values),
        not_computed=sum(o.status == "not_computed" for o in outcomes),
        failed=sum(o.status == "failed" for o in outcomes),
        reasons=dict(sorted(reasons.items())),
    )
