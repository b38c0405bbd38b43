"""The release gate: fail when a floor or ceiling is not met, or, against a baseline run, a
metric dropped by more than allowed or coverage fell. Bars alone need no baseline; a baseline
alone gates on the comparison; at least one of them is needed.

A drop fails the gate when the metric's mean fell by more than ``max_drop``, as the metric
reference's ``should_deploy`` does (``baseline - new > threshold``), whatever its significance;
with ``significant_only`` only when it is also significant after Holm's correction (paired
randomization test, ``alpha``), so that a 0.02 wobble on 30 questions passes while a real 0.1
drop on 200 fails. Either way every verdict carries its paired p-value and 95% interval, and the
gate states its power: per metric the smallest drop the test would find 80% of the time
(:func:`ragmeter.analysis.sign_flip.detectable_change`), or that none can be significant at this
n. "Drop" follows each metric's direction (a rise in hallucination is a drop). Coverage fell
when a metric has more failed or not-computed samples than the baseline.

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

from ragmeter.analysis.compare import (
    Comparison,
    MetricComparison,
    cannot_fail,
    compare_runs,
    not_significant,
    significance_legend,
)
from ragmeter.analysis.sign_flip import POWER, detectable_change
from ragmeter.analysis.thresholds import Threshold, checked_threshold, higher_is_better
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.settings import InvalidSettingError
from ragmeter.metrics import resolve_key


@dataclass
class GateCase:
    """One thing the gate checked, as a CI report lists it: a bar (``kind`` "floor" or "ceiling",
    ``name`` "recall@5 >= 0.7") or a metric compared with the baseline (``kind`` "baseline");
    ``failures``: why it failed (none: it passed); ``skipped``: why it was not checked."""

    kind: str
    name: str
    line: str
    failures: list[str] = field(default_factory=list)
    skipped: str | None = None


@dataclass
class GateResult:
    passed: bool
    failures: list[str]
    comparison: Comparison | None  # None without a baseline
    floors: dict[str, float] = field(default_factory=dict)
    ceilings: dict[str, float] = field(default_factory=dict)
    checks: list[str] = field(default_factory=list)  # one verdict line per floor or ceiling
    cannot_fail: list[str] = field(default_factory=list)  # what the significance test cannot detect at this n
    significant_only: bool = False  # a drop fails only when significant (else: when past max_drop)
    power: dict[str, float | None] = field(default_factory=dict)  # metric -> smallest drop found 80% of the time
    cases: list[GateCase] = field(default_factory=list)  # each bar and each metric compared, with its verdict

    def as_dict(self) -> dict:
        return {"passed": self.passed, "failures": self.failures, "floors": self.floors, "ceilings": self.ceilings,
                "checks": self.checks, "cannot_fail": self.cannot_fail,
                "mode": "significant-only" if self.significant_only else "max-drop",
                "power": {m: None if v is None or math.isinf(v) else v for m, v in self.power.items()},
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
         alpha: float = 0.05, allow_setup_change: bool = False, significant_only: bool = False) -> GateResult:
    """The verdict on ``run``: its floors and ceilings, and with a ``baseline`` the comparison
    (a drop beyond ``max_drop``, significant too with ``significant_only``; coverage that fell).
    Without a baseline, bars are needed and ``metrics`` (what is compared) is refused."""
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
    cases = [_metric_case(m, run, baseline, max_drop=max_drop, alpha=alpha, significant_only=significant_only)
             for m in (comparison.metrics if comparison is not None else [])]
    for name in comparison.metrics_only_a if comparison is not None else []:  # without -m: all the baseline's
        gone = (f"{name}: the baseline holds it, the run does not (score it in the run, or name the metrics "
                "to gate with -m)")
        cases.append(GateCase("baseline", name, gone, [gone]))
    checks = []
    for bar in bars:
        mean = run.summary[bar.metric].get("mean")
        checks.append(bar.line(mean))
        case = GateCase(bar.kind, f"{bar.metric} {bar.op} {bar.value}", bar.line(mean))
        if mean is None:
            case.failures.append(f"{bar.metric}: no mean in the run ({bar.kind} {bar.value})")
        elif not isinstance(mean, (int, float)) or not math.isfinite(mean):
            case.failures.append(f"{bar.metric}: the run's mean is not a finite number ({mean!r})")
        elif not bar.met(mean):
            case.failures.append(bar.miss(mean))
        cases.append(case)
    failures = [f for c in cases for f in c.failures]
    compared = [m for m in comparison.metrics if m.diff is not None] if comparison is not None else []
    return GateResult(not failures, failures, comparison,
                      {b.metric: b.value for b in bars if b.higher_is_better},
                      {b.metric: b.value for b in bars if not b.higher_is_better}, checks,
                      cannot_fail(comparison.metrics, alpha, significant_only=significant_only)
                      if comparison is not None else [],
                      significant_only=significant_only,
                      power={m.metric: detectable_change(m.spread, m.n, alpha, len(compared)) for m in compared},
                      cases=cases)


def _metric_case(m: MetricComparison, run, baseline, *, max_drop: float, alpha: float,
                 significant_only: bool) -> GateCase:
    """One metric against the baseline: a drop past ``max_drop`` (and significant, with
    ``significant_only``), a comparison that is not a number, coverage that fell."""
    case = GateCase("baseline", m.metric, "")
    if m.diff is None:
        case.skipped = "no sample scored in both runs (n=0), not compared"
        case.line = f"{m.metric}: {case.skipped}"
        return case
    numbers = (m.diff, m.mean_a, m.mean_b, m.p_holm)
    if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in numbers):
        case.failures.append(f"{m.metric}: the comparison is not a number ({', '.join(map(str, numbers))}): "
                             "a value in a run is not a finite number")
        case.line = case.failures[-1]
        return case
    drop = -m.diff if m.higher_is_better else m.diff  # for a lower-is-better metric a rise is the drop
    moved = "dropped" if m.higher_is_better else "rose (lower is better)"
    case.line = f"{m.metric}: {m.mean_a:.3f} -> {m.mean_b:.3f} ({m.diff:+.3f}, n={m.n}), {_significance(m, alpha)}"
    if significant_only and drop > max_drop and m.p_holm < alpha:
        case.failures.append(f"{m.metric} {moved} {drop:.3f} ({m.mean_a:.3f} -> {m.mean_b:.3f}, p={m.p_holm:.4f} "
                             f"after Holm), more than the allowed {max_drop}")
    elif not significant_only and drop > max_drop:
        case.failures.append(f"{m.metric} {moved} {drop:.3f} ({m.mean_a:.3f} -> {m.mean_b:.3f}), more than the "
                             f"allowed {max_drop}; {_significance(m, alpha, interval=True)}")
    new, old = run.summary.get(m.metric, {}), baseline.summary.get(m.metric, {})
    lost = (new.get("failed", 0) + new.get("not_computed", 0)) - (old.get("failed", 0) + old.get("not_computed", 0))
    if lost > 0:
        case.failures.append(f"{m.metric} coverage fell: {lost} more samples failed or not computed than the baseline")
    return case


def _significance(m: MetricComparison, alpha: float, *, interval: bool = False) -> str:
    """``significant (p=... after Holm < alpha)`` or ``not significant (p=... after Holm)``; with
    ``interval``, the n and the paired 95% interval too."""
    ci = f", 95% CI [{m.ci95[0]:+.3f}, {m.ci95[1]:+.3f}]" if interval and m.ci95 else ""
    if m.p_holm < alpha:
        return f"significant (p={m.p_holm:.4f} after Holm < {alpha}{ci}" + (f", n={m.n})" if interval else ")")
    return (f"not significant at n={m.n} (p={m.p_holm:.4f} after Holm{ci})" if interval
            else f"not significant (p={m.p_holm:.4f} after Holm)")


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
    if drops and result.significant_only:
        lines.append(f"  a drop larger than {max_drop} fails the gate only when it is significant: "
                     f"{len(drops)} such drop(s) here are not (more samples would tell)")
    elif drops:
        lines.append(f"  {len(drops)} drop(s) larger than {max_drop} fail the gate without being significant at "
                     f"{alpha} after Holm: they may be noise (more samples would tell; --significant-only fails "
                     "only on significant drops)")
    lines += [f"  {line}" for line in power_lines(result, alpha)]
    if cmp.metrics_only_b:
        lines.append(f"  not gated, new in the run: {', '.join(cmp.metrics_only_b)}")
    return "\n".join(lines)


def power_lines(result: GateResult, alpha: float = 0.05) -> list[str]:
    """What the significance test can find at these sample sizes: per metric the smallest true
    drop it finds significant 80% of the time, or that no drop can be significant at this n, or
    that it cannot be told (every paired difference the same)."""
    if not result.power or result.comparison is None:
        return []
    k = len(result.power)
    ns = {m.metric: m.n for m in result.comparison.metrics if m.metric in result.power}
    none = [m for m, v in result.power.items() if v is not None and math.isinf(v)]
    told = {m: v for m, v in result.power.items() if v is not None and not math.isinf(v)}
    untold = [m for m, v in result.power.items() if v is None]
    out = []
    if len(none) == k:
        n = max(ns.values())
        out.append(f"power: none at n={n}: no drop, however large, can be significant at alpha {alpha} over {k} "
                   f"metric(s) (even with all {n} samples differing the smallest p, 2/2^{n} = "
                   f"{2.0 ** (1 - n):.4f}, times {k} is not below it)")
    elif none:
        out.append(f"power: none for {', '.join(none)} at n={min(ns[m] for m in none)}: no drop can be significant")
    if told:
        out.append(f"power: the smallest drop found significant {POWER:.0%} of the time (alpha {alpha} over {k} "
                   "metric(s), from the spread of the paired differences): "
                   + ", ".join(f"{m} {v:.3f} (n={ns[m]})" for m, v in told.items()))
    if untold:
        out.append(f"power: not told for {', '.join(untold)} (every paired difference is the same)")
    return out


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
    power = power_lines(result, alpha)
    if power:
        lines += [""] + [line[0].upper() + line[1:] for line in power]
    if cmp.differences:
        lines += ["", "Setup differences (compared anyway):"] + [f"- {d}" for d in cmp.differences]
    return "\n".join(lines)
