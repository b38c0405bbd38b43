"""The release gate: fail when a metric dropped significantly by more than allowed, a floor
is not met, or coverage fell, against a baseline run.

A drop counts when it is larger than ``max_drop`` and significant after Holm's correction
(paired randomization test, ``alpha``), so a 0.02 wobble on 30 questions passes while a real
0.1 drop on 200 fails. "Drop" follows each metric's direction (a rise in hallucination is a
drop). Coverage fell when a metric has more failed or not-computed samples than the baseline.

Floors and ``metrics`` name measures as everywhere (``--min mrr@5=0.5`` is the floor of
``reciprocal_rank@5``); a name the run does not hold is a usage error (exit 2), not a pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ragmeter.analysis.compare import Comparison, compare_runs
from ragmeter.core.settings import InvalidSettingError
from ragmeter.metrics import resolve_key


@dataclass
class GateResult:
    passed: bool
    failures: list[str]
    comparison: Comparison
    floors: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"passed": self.passed, "failures": self.failures, "floors": self.floors,
                "comparison": self.comparison.as_dict()}


def check_thresholds(*, max_drop: float, alpha: float, floors: Mapping[str, float] | None = None) -> None:
    """Numbers that cannot be thresholds are refused: a NaN or negative ``max_drop``, an
    ``alpha`` outside (0, 1), a floor that is not finite (NaN compares false with every mean,
    so a NaN floor could never fail)."""
    if not math.isfinite(max_drop) or max_drop < 0:
        raise InvalidSettingError("max_drop", f"must be a finite number >= 0, got {max_drop!r}")
    if not math.isfinite(alpha) or not 0 < alpha < 1:
        raise InvalidSettingError("alpha", f"must be a significance level strictly between 0 and 1, got {alpha!r}")
    for name, floor in (floors or {}).items():
        if not math.isfinite(floor):
            raise InvalidSettingError("floors", f"the floor of {name} must be a finite number, got {floor!r}")


def gate(run, baseline, *, max_drop: float = 0.02, metrics: Sequence[str] | None = None,
         floors: Mapping[str, float] | None = None, alpha: float = 0.05,
         allow_setup_change: bool = False) -> GateResult:
    check_thresholds(max_drop=max_drop, alpha=alpha, floors=floors)
    resolved = {resolve_key(name, run.summary, holder=f"the run ({getattr(run, 'name', '')})"): floor
                for name, floor in (floors or {}).items()}
    comparison = compare_runs(baseline, run, metrics=metrics, allow_setup_change=allow_setup_change)
    failures = []
    for m in comparison.metrics:
        if m.diff is None:
            continue
        drop = -m.diff if m.higher_is_better else m.diff
        if drop > max_drop and m.p_holm < alpha:
            failures.append(f"{m.metric} dropped {drop:.3f} ({m.mean_a:.3f} -> {m.mean_b:.3f}, p={m.p_holm:.4f} "
                            f"after Holm), more than the allowed {max_drop}")
        new, old = run.summary.get(m.metric, {}), baseline.summary.get(m.metric, {})
        lost = (new.get("failed", 0) + new.get("not_computed", 0)) - (old.get("failed", 0) + old.get("not_computed", 0))
        if lost > 0:
            failures.append(f"{m.metric} coverage fell: {lost} more samples failed or not computed than the baseline")
    for name, floor in resolved.items():
        mean = run.summary[name].get("mean")
        if mean is None:
            failures.append(f"{name}: no mean in the run (floor {floor})")
        elif mean < floor:
            failures.append(f"{name} {mean:.3f} is below its floor {floor}")
    return GateResult(not failures, failures, comparison, resolved)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def markdown(result: GateResult) -> str:
    """A summary for a CI comment."""
    head = "**ragmeter gate: passed**" if result.passed else "**ragmeter gate: failed**"
    lines = [head, ""]
    lines += [f"- {f}" for f in result.failures]
    lines += ["", "| metric | baseline | new | diff | 95% CI | p (Holm) | up / down / tied |",
              "|---|---|---|---|---|---|---|"]
    for m in result.comparison.metrics:
        ci = f"[{m.ci95[0]:+.3f}, {m.ci95[1]:+.3f}]" if m.ci95 else "-"
        lines.append(f"| {m.metric} | {_fmt(m.mean_a)} | {_fmt(m.mean_b)} | "
                     f"{'-' if m.diff is None else f'{m.diff:+.3f}'} | {ci} | {m.p_holm:.4f} | "
                     f"{m.improved} / {m.worsened} / {m.tied} |")
    if result.comparison.differences:
        lines += ["", "Setup differences (compared anyway):"] + [f"- {d}" for d in result.comparison.differences]
    return "\n".join(lines)
