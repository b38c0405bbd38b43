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

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ragmeter.analysis.compare import Comparison, compare_runs
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


def gate(run, baseline, *, max_drop: float = 0.02, metrics: Sequence[str] | None = None,
         floors: Mapping[str, float] | None = None, alpha: float = 0.05,
         allow_setup_change: bool = False) -> GateResult:
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


def text(result: GateResult, *, max_drop: float = 0.02, alpha: float = 0.05) -> str:
    """The gate's verdict with the numbers behind it: per metric the baseline and new means, the
    change, n paired samples, Holm's p and whether the change is significant at ``alpha``."""
    lines = ["gate passed" if result.passed else "gate failed:"]
    lines += [f"  {f}" for f in result.failures]
    for m in result.comparison.metrics:
        if m.diff is None or m.mean_a is None or m.mean_b is None:
            lines.append(f"  {m.metric}: no sample scored in both runs (n=0), not compared")
            continue
        verdict = (f"significant (p={m.p_holm:.4f} after Holm < {alpha})" if m.p_holm < alpha else
                   f"not significant (p={m.p_holm:.4f} after Holm, n={m.n})")
        lines.append(f"  {m.metric}: {m.mean_a:.3f} -> {m.mean_b:.3f} ({m.diff:+.3f}, n={m.n}), {verdict}")
    drops = [m for m in result.comparison.metrics if m.diff is not None and m.p_holm >= alpha
             and (-m.diff if m.higher_is_better else m.diff) > max_drop]
    if drops:
        lines.append(f"  a drop larger than {max_drop} fails the gate only when it is significant: "
                     f"{len(drops)} such drop(s) here are not (more samples would tell)")
    cmp = result.comparison
    if cmp.metrics_only_a or cmp.metrics_only_b:
        lines.append(f"  not gated, held by one run only: baseline {', '.join(cmp.metrics_only_a) or '-'}; "
                     f"run {', '.join(cmp.metrics_only_b) or '-'}")
    return "\n".join(lines)


def markdown(result: GateResult) -> str:
    """A summary for a CI comment."""
    head = "**ragmeter gate: passed**" if result.passed else "**ragmeter gate: failed**"
    lines = [head, ""]
    lines += [f"- {f}" for f in result.failures]
    lines += ["", "| metric | baseline | new | diff | 95% CI | p (Holm) | up / down / tied |",
              "|---|---|---|---|---|---|---|"]
    for m in result.comparison.metrics:
        ci = f"[{m.ci95[0]:+.3f}, {m.ci95[1]:+.3f}]" if m.ci95 else "-"
        fmt = (lambda x: "-" if x is None else f"{x:.3f}")
        lines.append(f"| {m.metric} | {fmt(m.mean_a)} | {fmt(m.mean_b)} | "
                     f"{'-' if m.diff is None else f'{m.diff:+.3f}'} | {ci} | {m.p_holm:.4f} | "
                     f"{m.improved} / {m.worsened} / {m.tied} |")
    if result.comparison.differences:
        lines += ["", "Setup differences (compared anyway):"] + [f"- {d}" for d in result.comparison.differences]
    return "\n".join(lines)
