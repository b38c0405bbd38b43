"""The release gate: fail when a floor or ceiling is not met, or, against a baseline run, a
metric dropped significantly by more than allowed or coverage fell. Bars alone need no
baseline; a baseline alone gates on the comparison; at least one of them is needed.

A drop counts when it is larger than ``max_drop`` and significant after Holm's correction
(paired randomization test, ``alpha``), so a 0.02 wobble on 30 questions passes while a real
0.1 drop on 200 fails. "Drop" follows each metric's direction (a rise in hallucination is a
drop). Coverage fell when a metric has more failed or not-computed samples than the baseline.

A gate never passes on a run it cannot read whole: the run reader refuses damaged files (a
results.jsonl cut short or missing, a summary.json missing, a value that is a string or NaN;
:mod:`ragmeter.runs.run_check`), the gate refuses a run (or baseline) that is not complete, and
a mean, change or p-value that is not a finite number fails the gate instead of comparing false.

Floors, ceilings and ``metrics`` name measures as everywhere (``--min mrr@5=0.5`` is the floor
of ``reciprocal_rank@5``); a name the run does not hold is a usage error (exit 2), not a pass.
Floors (``--min``) are for higher-is-better metrics and ceilings (``--max``) for lower-is-better
ones (``--max contradiction_rate=0.1``); the other way round is a usage error naming the fix
(see :mod:`ragmeter.analysis.thresholds`). ``checks`` holds one line per bar:
``contradiction_rate 0.000 <= 0.100 ok``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ragmeter.analysis.compare import Comparison, cannot_fail, compare_runs, not_significant, significance_legend
from ragmeter.analysis.thresholds import Threshold, checked_threshold, higher_is_better
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.settings import InvalidSettingError
from ragmeter.metrics import resolve_key


@dataclass
class GateResult:
    passed: bool
    failures: list[str]
    comparison: Comparison | None  # None without a baseline
    floors: dict[str, float] = field(default_factory=dict)
    ceilings: dict[str, float] = field(default_factory=dict)
    checks: list[str] = field(default_factory=list)  # one verdict line per floor or ceiling
    cannot_fail: list[str] = field(default_factory=list)  # what the significance test cannot detect at this n

    def as_dict(self) -> dict:
        return {"passed": self.passed, "failures": self.failures, "floors": self.floors, "ceilings": self.ceilings,
                "checks": self.checks, "cannot_fail": self.cannot_fail,
                "comparison": self.comparison.as_dict() if self.comparison is not None else None}


def check_thresholds(*, max_drop: float, alpha: float, floors: Mapping[str, float] | None = None,
                     ceilings: Mapping[str, float] | None = None) -> None:
    """Numbers that cannot be thresholds are refused: a NaN or negative ``max_drop``, an
    ``alpha`` outside (0, 1), a floor or ceiling that is not finite (NaN compares false with
    every mean, so a NaN bar could never fail)."""
    if not math.isfinite(max_drop) or max_drop < 0:
        raise InvalidSettingError("max_drop", f"must be a finite number >= 0, got {max_drop!r}")
    if not math.isfinite(alpha) or not 0 < alpha < 1:
        raise InvalidSettingError("alpha", f"must be a significance level strictly between 0 and 1, got {alpha!r}")
    for setting, bars in (("floors", floors), ("ceilings", ceilings)):
        for name, value in (bars or {}).items():
            if not math.isfinite(value):
                raise InvalidSettingError(setting, f"the {setting[:-1]} of {name} must be a finite number, "
                                                   f"got {value!r}")


def gate(run, baseline=None, *, max_drop: float = 0.02, metrics: Sequence[str] | None = None,
         floors: Mapping[str, float] | None = None, ceilings: Mapping[str, float] | None = None,
         alpha: float = 0.05, allow_setup_change: bool = False) -> GateResult:
    """The verdict on ``run``: its floors and ceilings, and with a ``baseline`` the comparison
    (a significant drop beyond ``max_drop``, coverage that fell). Without a baseline, bars are
    needed and ``metrics`` (what is compared) is refused."""
    check_thresholds(max_drop=max_drop, alpha=alpha, floors=floors, ceilings=ceilings)
    if baseline is None and not floors and not ceilings:
        raise InvalidSettingError("baseline", "nothing to gate on: give a baseline run (--baseline B), "
                                              "or bars (--min METRIC=VALUE, --max METRIC=VALUE)")
    if baseline is None and metrics:
        raise InvalidSettingError("metrics", "--metric chooses the metrics compared with the baseline: "
                                             "give --baseline B, or drop --metric (the bars name their metrics)")
    for which, r in (("run", run), ("baseline", baseline)):
        _check_complete(which, r)
    bars: list[Threshold] = []
    for asked, given in (("floor", floors), ("ceiling", ceilings)):
        for name, value in (given or {}).items():
            key = resolve_key(name, run.summary, holder=f"the run ({getattr(run, 'name', '')})")
            higher = higher_is_better(key, run.setup.get("metrics", {}).get(key))
            bars.append(checked_threshold(key, value, higher=higher, asked=asked))
    comparison = None if baseline is None else compare_runs(baseline, run, metrics=metrics,
                                                             allow_setup_change=allow_setup_change)
    failures = []
    for m in comparison.metrics if comparison is not None else []:
        if m.diff is None:
            continue
        numbers = (m.diff, m.mean_a, m.mean_b, m.p_holm)
        if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in numbers):
            failures.append(f"{m.metric}: the comparison is not a number ({', '.join(map(str, numbers))}): "
                            "a value in a run is not a finite number")
            continue
        drop = -m.diff if m.higher_is_better else m.diff  # for a lower-is-better metric a rise is the drop
        if drop > max_drop and m.p_holm < alpha:
            moved = "dropped" if m.higher_is_better else "rose (lower is better)"
            failures.append(f"{m.metric} {moved} {drop:.3f} ({m.mean_a:.3f} -> {m.mean_b:.3f}, p={m.p_holm:.4f} "
                            f"after Holm), more than the allowed {max_drop}")
        new, old = run.summary.get(m.metric, {}), baseline.summary.get(m.metric, {})
        lost = (new.get("failed", 0) + new.get("not_computed", 0)) - (old.get("failed", 0) + old.get("not_computed", 0))
        if lost > 0:
            failures.append(f"{m.metric} coverage fell: {lost} more samples failed or not computed than the baseline")
    checks = []
    for bar in bars:
        mean = run.summary[bar.metric].get("mean")
        checks.append(bar.line(mean))
        if mean is None:
            failures.append(f"{bar.metric}: no mean in the run ({bar.kind} {bar.value})")
        elif not isinstance(mean, (int, float)) or not math.isfinite(mean):
            failures.append(f"{bar.metric}: the run's mean is not a finite number ({mean!r})")
        elif not bar.met(mean):
            failures.append(bar.miss(mean))
    return GateResult(not failures, failures, comparison,
                      {b.metric: b.value for b in bars if b.higher_is_better},
                      {b.metric: b.value for b in bars if not b.higher_is_better}, checks,
                      cannot_fail(comparison.metrics, alpha) if comparison is not None else [])


def _check_complete(which: str, run) -> None:
    """A verdict needs every sample: a run still running or interrupted is refused."""
    if run is None or getattr(run, "complete", True):
        return
    status = getattr(run, "status", "not complete")
    raise InvalidInputError(f"the {which} is {status}, not complete: it does not hold every sample's results, and "
                            "a gate never passes on part of a run", file=str(getattr(run, "path", "")) or None,
                            fix="finish it first: ragmeter eval --resume RUN")


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def text(result: GateResult, *, max_drop: float = 0.02, alpha: float = 0.05) -> str:
    """The gate's verdict with the numbers behind it: each floor and ceiling with the run's mean,
    and with a baseline, per metric the baseline and new means, the change, n paired samples,
    Holm's p and whether the change is significant at ``alpha``."""
    lines = ["gate passed" if result.passed else "gate failed:"]
    lines += [f"  {f}" for f in result.failures]
    lines += [f"  NOTE: {c}" for c in result.cannot_fail]
    cmp = result.comparison
    for m in cmp.metrics if cmp is not None else []:
        if m.diff is None or m.mean_a is None or m.mean_b is None:
            lines.append(f"  {m.metric}: no sample scored in both runs (n=0), not compared")
            continue
        verdict = (f"significant (p={m.p_holm:.4f} after Holm < {alpha})" if m.p_holm < alpha else
                   f"not significant (p={m.p_holm:.4f} after Holm)")
        lines.append(f"  {m.metric}: {m.mean_a:.3f} -> {m.mean_b:.3f} ({m.diff:+.3f}, n={m.n}), {verdict}")
    if result.checks:
        lines.append("  thresholds:")
        lines += [f"    {c}" for c in result.checks]
    if cmp is None:
        lines.append("  no baseline: the thresholds alone were checked (--baseline B also compares the runs)")
        return "\n".join(lines)
    drops = [m for m in cmp.metrics if m.diff is not None and m.p_holm >= alpha
             and (-m.diff if m.higher_is_better else m.diff) > max_drop]
    if drops:
        lines.append(f"  a drop larger than {max_drop} fails the gate only when it is significant: "
                     f"{len(drops)} such drop(s) here are not (more samples would tell)")
    if cmp.metrics_only_a or cmp.metrics_only_b:
        lines.append(f"  not gated, held by one run only: baseline {', '.join(cmp.metrics_only_a) or '-'}; "
                     f"run {', '.join(cmp.metrics_only_b) or '-'}")
    return "\n".join(lines)


def markdown(result: GateResult, *, alpha: float = 0.05) -> str:
    """A summary for a CI comment: the failures, the bars, and the comparison table, where a
    change not significant at ``alpha`` after Holm is marked ``n.s.`` (as the text output says
    "not significant"), with the legend (:func:`significance_legend`)."""
    head = "**ragmeter gate: passed**" if result.passed else "**ragmeter gate: failed**"
    lines = [head, ""]
    lines += [f"- {f}" for f in result.failures]
    lines += [f"- **note**: {c}" for c in result.cannot_fail]
    if result.checks:
        lines += ["", "Thresholds:"] + [f"- `{c}`" for c in result.checks]
    cmp = result.comparison
    if cmp is None:
        lines += ["", "No baseline: the thresholds alone were checked."]
        return "\n".join(lines)
    lines += ["", "| metric | better | baseline | new | diff | 95% CI | p (Holm) | improved / worsened / tied |",
              "|---|---|---|---|---|---|---|---|"]
    for m in cmp.metrics:
        ci = f"[{m.ci95[0]:+.3f}, {m.ci95[1]:+.3f}]" if m.ci95 else "-"
        diff = "-" if m.diff is None else f"{m.diff:+.3f}" + (" n.s." if not_significant(m, alpha) else "")
        lines.append(f"| {m.metric} | {'higher' if m.higher_is_better else 'lower'} | {_fmt(m.mean_a)} | "
                     f"{_fmt(m.mean_b)} | {diff} | {ci} | {m.p_holm:.4f} | "
                     f"{m.improved} / {m.worsened} / {m.tied} |")
    legend = significance_legend(cmp.metrics, alpha)
    if legend:
        lines += [""] + legend
    if cmp.differences:
        lines += ["", "Setup differences (compared anyway):"] + [f"- {d}" for d in cmp.differences]
    return "\n".join(lines)
