"""Run-vs-run comparison with paired significance, and the setup check that guards it.

For each metric both runs scored, over the queries scored in both:

- the means and the paired difference d = mean(B - A), with a 95% paired-bootstrap
  interval (seeded);
- a two-sided paired randomization (sign-flip) test: p = share of random sign flips of the
  per-query differences whose mean is at least as far from 0 as the observed one (exact
  enumeration up to 2^16 flips, else 20,000 seeded ones, past 5,000 samples with the sum of the
  small differences taken as normal; Fisher 1935, Smucker et al. 2007;
  :mod:`ragmeter.analysis.sign_flip`, in memory that does not grow with n);
- Holm's step-down correction across the metrics compared (Holm 1979); with n paired samples
  that differ the test's smallest p is 2 / 2^n, so over m metrics nothing is significant unless
  m * 2 / 2^n < alpha (:func:`cannot_fail` says so: 6 samples and 5 metrics can never fail);
- how many queries improved, worsened or tied, and the queries that moved most.

Two runs are comparable only if every setting that changes a number agrees: metric version
and parameters, k, view, judge backend/model/decoding, prompt hashes, and the test set
(questions, labels, references). ``compare`` refuses otherwise and says what differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ragmeter.analysis.sign_flip import randomization_p, samples_needed, smallest_p, spread
from ragmeter.core.bootstrap import paired_bootstrap_ci
from ragmeter.core.errors import RagmeterError
from ragmeter.core.measure import MeasureNotFound
from ragmeter.core.result_columns import ResultColumns, columns_of
from ragmeter.metrics import get_spec, resolve_key

__all__ = ["randomization_p", "samples_needed", "smallest_p"]  # the test's functions, kept importable from here


class SetupMismatch(RagmeterError):
    """The runs' setups differ in something that changes the numbers."""

    def __init__(self, differences: list[str]) -> None:
        self.differences = differences
        super().__init__("the runs are not comparable:\n  " + "\n  ".join(differences)
                         + "\n(--allow-setup-change compares anyway and prints these above the table)")


class NothingInCommon(RagmeterError):
    """The runs hold no measure in common: there is nothing to compare, with or without
    ``allow_setup_change``."""


def cannot_fail(metrics: Sequence[MetricComparison], alpha: float, *, significant_only: bool = True) -> list[str]:
    """What the significance test cannot detect at these sample sizes, one line each: the whole
    comparison when no metric can pass Holm's first step (``compared * smallest p >= alpha``:
    then no change, however large, is significant), else each metric whose own smallest p is not
    below ``alpha`` (it cannot be significant at any Holm step; a metric that did not move at all
    is not named). ``significant_only``: the gate fails only on significant drops, so such a
    comparison cannot fail it; otherwise a drop past the allowance fails it all the same, and the
    line says so."""
    compared = [m for m in metrics if m.diff is not None]
    if not compared:
        return []
    k = len(compared)
    need = samples_needed(k, alpha)
    floors = {m.metric: smallest_p(m.improved + m.worsened) for m in compared}
    if all(k * p >= alpha for p in floors.values()):
        most = max(m.improved + m.worsened for m in compared)
        why = (f"with at most {most} paired sample(s) that differ, the sign-flip test's smallest p is "
               f"{min(floors.values()):.4f}, and Holm over {k} metric(s) makes it "
               f"{min(1.0, k * min(floors.values())):.4f}, not below alpha {alpha}; no drop can be significant")
        if not significant_only:
            return [f"the significance test cannot reject at this n: {why} (a drop past --max-drop fails the gate "
                    f"all the same). A significant drop needs at least {need} samples that differ (or fewer metrics "
                    "with -m)"]
        return [f"the comparison cannot fail at this n: {why}. "
                f"It needs at least {need} samples that differ (or fewer metrics with -m, or bars: --min/--max)"]
    return [f"{m.metric} cannot be significant at this n: {m.improved + m.worsened} paired sample(s) differ, so its "
            f"smallest p is {floors[m.metric]:.4f}, not below alpha {alpha} (it needs at least "
            f"{samples_needed(1, alpha)}; {need} to pass Holm's first step over {k} metrics)"
            for m in compared if m.improved + m.worsened and floors[m.metric] >= alpha]


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (monotone, capped at 1)."""
    m = len(pvalues)
    order = np.argsort(pvalues)
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted.tolist()


@dataclass
class MetricComparison:
    metric: str
    n: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    ci95: tuple[float, float] | None
    p: float
    p_holm: float = 1.0
    improved: int = 0
    worsened: int = 0
    tied: int = 0
    movers: list[tuple[str, float]] = field(default_factory=list)
    higher_is_better: bool = True
    spread: float | None = None  # the paired differences' standard deviation (for the gate's power)

    def as_dict(self) -> dict:
        return {"metric": self.metric, "n": self.n, "mean_a": self.mean_a, "mean_b": self.mean_b, "diff": self.diff,
                "ci95": list(self.ci95) if self.ci95 else None, "p": self.p, "p_holm": self.p_holm,
                "improved": self.improved, "worsened": self.worsened, "tied": self.tied,
                "movers": [{"id": i, "diff": d} for i, d in self.movers], "higher_is_better": self.higher_is_better}


@dataclass
class Comparison:
    metrics: list[MetricComparison]
    only_a: list[str]
    only_b: list[str]
    differences: list[str]
    metrics_only_a: list[str] = field(default_factory=list)  # measures one run holds and the other does not
    metrics_only_b: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"metrics": [m.as_dict() for m in self.metrics], "only_in_a": self.only_a, "only_in_b": self.only_b,
                "metrics_only_in_a": self.metrics_only_a, "metrics_only_in_b": self.metrics_only_b,
                "setup_differences": self.differences}


def not_significant(m: MetricComparison, alpha: float) -> bool:
    """A change (a nonzero difference) whose Holm-corrected p does not reach ``alpha``: shown ``n.s.``."""
    return bool(m.diff) and not m.p_holm < alpha


def significance_legend(metrics: Sequence[MetricComparison], alpha: float) -> list[str]:
    """What ``n.s.`` and the 95% interval mean, under a comparison table that shows an ``n.s.``.

    The verdict is the paired randomization test's p after Holm's correction over the metrics
    compared; the interval is the paired bootstrap's, per metric, not corrected (a Holm-matched
    interval has no standard form), and at few samples a percentile bootstrap runs narrower than
    the exact test. So the two can disagree: a metric whose interval excludes 0 while it is ``n.s.``
    is named, with its p, rather than left to look like a contradiction.
    """
    ns = [m for m in metrics if not_significant(m, alpha)]
    if not ns:
        return []
    lines = [f"n.s.: not significant at {alpha} after Holm's correction over the {len(metrics)} metric(s) compared "
             "(paired randomization test); the direction is shown only for significant changes",
             "95% CI: paired bootstrap, per metric, not corrected for comparing several metrics"]
    split = [m for m in ns if m.ci95 and (m.ci95[0] > 0 or m.ci95[1] < 0)]
    if split:
        named = ", ".join(f"{m.metric} (p={m.p_holm:.4f} after Holm)" for m in split)
        lines.append(f"interval excludes 0 but n.s.: {named}: the corrected test decides; the interval is "
                     "uncorrected, and a bootstrap interval runs narrow on few samples")
    return lines


NUMBER_FIELDS = ("metric_version", "params", "k", "view", "judge")


def setup_differences(a, b) -> list[str]:
    out = []
    ta = a.setup.get("dataset", {}).get("testset_fingerprint")
    tb = b.setup.get("dataset", {}).get("testset_fingerprint")
    if ta != tb:
        out.append(f"test set (questions, labels, references): {ta} vs {tb}")
    sa, sb = getattr(a, "summary", None) or {}, getattr(b, "summary", None) or {}
    if sa and sb and not set(sa) & set(sb):  # e.g. another --k: a gate would compare nothing and pass
        out.append(f"measures: none in common (run A, {_run_name(a)}, holds {', '.join(sa)}; run B, {_run_name(b)}, "
                   f"holds {', '.join(sb)}); "
                   "score both with the same metrics and k")
    ma, mb = a.setup.get("metrics", {}), b.setup.get("metrics", {})
    for name in sorted(set(ma) & set(mb)):
        for f in NUMBER_FIELDS:
            if ma[name].get(f) != mb[name].get(f):
                out.append(f"{name}: {_difference(f, ma[name].get(f), mb[name].get(f))}")
    return out


_ABSENT = object()
_SHOWN = 4  # differing leaves named per field (the rest counted)


def _difference(field: str, a, b) -> str:
    """What differs in one setup field: for two mappings (a judge's identity), each differing
    leaf by its dotted path, so that a long identity is not cut before the difference.

    >>> _difference("judge", {"backend": "local", "stages": ["evidence"]}, {"backend": "local",
    ...             "stages": ["evidence", "model"]})
    "judge.stages ['evidence'] vs ['evidence', 'model']"
    """
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return f"{field} {_short(a)} vs {_short(b)}"
    leaves = list(_leaf_differences(a, b, f"{field}."))
    shown = "; ".join(f"{path} {_short(x)} vs {_short(y)}" for path, x, y in leaves[:_SHOWN])
    return shown + (f"; and {len(leaves) - _SHOWN} more" if len(leaves) > _SHOWN else "")


def _leaf_differences(a: dict, b: dict, prefix: str):
    for key in sorted(set(a) | set(b), key=str):
        x, y = a.get(key, _ABSENT), b.get(key, _ABSENT)
        if x == y:
            continue
        if isinstance(x, dict) and isinstance(y, dict):
            yield from _leaf_differences(x, y, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", x, y


def _short(value) -> str:
    text = "(absent)" if value is _ABSENT else str(value)
    return text if len(text) < 120 else text[:117] + "..."


def compared_names(a, b, metrics: Sequence[str] | None) -> list[str]:
    """The measures to compare, as the runs name them: each of ``metrics`` resolved through the
    parser (aliases, default parameters, the one cut-off held) and held by both runs; without
    ``metrics``, every measure both runs hold. A name either run lacks is an error."""
    if not metrics:
        return [m for m in a.summary if m in b.summary]
    out = []
    for name in metrics:
        key = resolve_key(name, a.summary, holder=f"run A ({_run_name(a)})")
        if key not in b.summary:
            raise MeasureNotFound(f"run B ({_run_name(b)}) has no measure {key!r} (asked for as {name!r}); "
                                  f"it holds: {', '.join(b.summary) or 'no measures'}")
        if key not in out:
            out.append(key)
    return out


def _run_name(run) -> str:
    return str(getattr(run, "name", "") or "unnamed")


def compare_runs(a, b, *, metrics: Sequence[str] | None = None, allow_setup_change: bool = False,
                 movers: int = 5) -> Comparison:
    """Compare run B with run A, per measure (see :func:`compared_names` for ``metrics``). The runs
    are read in columns (:mod:`ragmeter.core.result_columns`): the samples paired by id, in id
    order, each measure's values as arrays."""
    differences = setup_differences(a, b)
    if differences and not allow_setup_change:
        raise SetupMismatch(differences)
    cols_a, cols_b = columns_of(a), columns_of(b)
    at_a = dict(zip(cols_a.ids, range(len(cols_a.ids))))  # id -> its row (the last, as a dict of rows keeps)
    at_b = dict(zip(cols_b.ids, range(len(cols_b.ids))))
    common = sorted(at_a.keys() & at_b.keys())
    rows_a = np.fromiter(map(at_a.__getitem__, common), dtype=np.int64, count=len(common))
    rows_b = np.fromiter(map(at_b.__getitem__, common), dtype=np.int64, count=len(common))
    names = compared_names(a, b, metrics)
    if not names:  # compared anyway (--allow-setup-change), but nothing is held by both
        raise NothingInCommon(f"nothing to compare: run A ({_run_name(a)}) holds {', '.join(a.summary) or 'no measure'}"
                              f"; run B ({_run_name(b)}) holds {', '.join(b.summary) or 'no measure'}")
    out = [_compare_measure(name, a, cols_a, cols_b, common, rows_a, rows_b, movers) for name in names]
    for m, p in zip(out, holm([m.p for m in out])):
        m.p_holm = p
    return Comparison(out, sorted(at_a.keys() - at_b.keys()), sorted(at_b.keys() - at_a.keys()), differences,
                      metrics_only_a=[] if metrics else [m for m in a.summary if m not in b.summary],
                      metrics_only_b=[] if metrics else [m for m in b.summary if m not in a.summary])


def _compare_measure(name: str, a, cols_a: ResultColumns, cols_b: ResultColumns, common: list[str],
                     rows_a: np.ndarray, rows_b: np.ndarray, movers: int) -> MetricComparison:
    """One measure over the samples both runs hold, where both gave a value."""
    ca, cb = cols_a.column(name), cols_b.column(name)
    both = ca.valued[rows_a] & cb.valued[rows_b]
    x, y = ca.values[rows_a[both]], cb.values[rows_b[both]]
    diffs = y - x
    prov = a.setup.get("metrics", {}).get(name, {})
    try:
        better = get_spec(prov.get("metric_name", name)).higher_is_better
    except RagmeterError:
        better = True
    moved = np.flatnonzero(diffs != 0)
    top = moved[np.argsort(-np.abs(diffs[moved]), kind="stable")[:movers]]
    paired_ids = np.flatnonzero(both)
    up, down = int(np.count_nonzero(diffs > 0)), int(np.count_nonzero(diffs < 0))
    return MetricComparison(
        metric=name, n=len(diffs),
        mean_a=float(np.mean(x)) if len(x) else None, mean_b=float(np.mean(y)) if len(y) else None,
        diff=float(np.mean(diffs)) if len(diffs) else None, ci95=paired_bootstrap_ci(diffs),
        p=randomization_p(diffs),
        improved=up if better else down, worsened=down if better else up,
        tied=int(np.count_nonzero(diffs == 0)),
        movers=[(common[paired_ids[i]], float(diffs[i])) for i in top.tolist()],
        higher_is_better=better, spread=spread(diffs))
