"""Direction-aware thresholds: a floor for a higher-is-better metric, a ceiling for a
lower-is-better one (``contradiction_rate``, ``hallucination``, ``noise_sensitivity``,
``false_refusal``).

Every place that holds a mean against a bar (``assert_metrics``, ``ragmeter gate``,
``ragmeter watch`` alerts) reads the direction from the metric's spec
(``MetricSpec.higher_is_better``) and says it in its output:

>>> Threshold("contradiction_rate", 0.1, higher_is_better=False).line(0.0)
'contradiction_rate 0.000 <= 0.100 ok'
>>> Threshold("recall@5", 0.9).line(0.778)
'recall@5 0.778 >= 0.900 FAILED'

A floor asked for on a lower-is-better metric (or a ceiling on a higher-is-better one) is a
usage error with the fix, never a silent pass or fail: a floor of 0.1 on the contradiction
rate would fail a perfect 0.0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragmeter.core.errors import InvalidParameterError, RagmeterError
from ragmeter.core.measure import Measure
from ragmeter.metrics import get_spec, parse_measure


def higher_is_better(key: str | Measure, provenance: dict[str, Any] | None = None) -> bool:
    """The direction of the measure ``key`` names: from the measure's spec, else the spec of
    the metric its stored provenance names, else of the name parsed (``mrr@5``). A name no
    registered metric answers to counts as higher-is-better (a user's own column)."""
    if isinstance(key, Measure):
        return key.spec.higher_is_better
    name = (provenance or {}).get("metric_name")
    try:
        return get_spec(name).higher_is_better if name else parse_measure(key).spec.higher_is_better
    except RagmeterError:
        return True


@dataclass(frozen=True)
class Threshold:
    """A bar on a metric's mean: ``mean >= value`` (a floor) when higher is better,
    ``mean <= value`` (a ceiling) when lower is better."""

    metric: str
    value: float
    higher_is_better: bool = True

    @property
    def kind(self) -> str:
        return "floor" if self.higher_is_better else "ceiling"

    @property
    def op(self) -> str:
        return ">=" if self.higher_is_better else "<="

    def met(self, mean: float) -> bool:
        return mean >= self.value if self.higher_is_better else mean <= self.value

    def beyond(self, value: float) -> bool:
        """A per-sample value on the wrong side of the bar."""
        return not self.met(value)

    def line(self, mean: float | None) -> str:
        """``contradiction_rate 0.000 <= 0.100 ok``: the mean, the direction, the bar, the verdict."""
        if mean is None:
            return f"{self.metric} (no mean) {self.op} {self.value:.3f} FAILED"
        return f"{self.metric} {mean:.3f} {self.op} {self.value:.3f} {'ok' if self.met(mean) else 'FAILED'}"

    def miss(self, mean: float) -> str:
        """How a mean misses the bar, in words: ``is below its floor 0.9`` / ``is above its ceiling 0.1``."""
        side = "below its floor" if self.higher_is_better else "above its ceiling"
        return f"{self.metric} {mean:.3f} is {side} {self.value} ({'higher' if self.higher_is_better else 'lower'} " \
               f"is better)"


def checked_threshold(metric: str, value: float, *, higher: bool, asked: str | None = None,
                      floor: str = "--min {metric}={value}", ceiling: str = "--max {metric}={value}") -> Threshold:
    """The threshold ``asked`` for (``"floor"``, ``"ceiling"`` or ``None``: the metric's own
    direction) on ``metric``, whose direction is ``higher``. A floor on a lower-is-better
    metric or a ceiling on a higher-is-better one raises :class:`InvalidParameterError` naming
    the fix; ``floor`` and ``ceiling`` say how the caller writes each (format strings with
    ``{metric}`` and ``{value}``)."""
    written = {"floor": floor.format(metric=metric, value=value), "ceiling": ceiling.format(metric=metric, value=value)}
    if asked == "floor" and not higher:
        raise InvalidParameterError(f"{metric} is lower-is-better: a floor ({written['floor']}) would fail its best "
                                    f"values. Fix: give a ceiling, {written['ceiling']}")
    if asked == "ceiling" and higher:
        raise InvalidParameterError(f"{metric} is higher-is-better: a ceiling ({written['ceiling']}) would fail its "
                                    f"best values. Fix: give a floor, {written['floor']}")
    return Threshold(metric, float(value), higher)
