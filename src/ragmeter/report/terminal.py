"""Terminal views of saved runs: the run list, one run's summary, the diagnosis.

Every cell of a rich table is a ``Text`` (rich never parses ``[red]`` in an id as markup) and
every piece of text from data passes :func:`~ragmeter.core.display.terminal_safe` (no escape
sequence reaches the terminal)."""

from __future__ import annotations

import io
import shlex
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragmeter.analysis.compare import significance_legend
from ragmeter.analysis.diagnosis import count_labels
from ragmeter.core.display import terminal_safe as safe
from ragmeter.core.settings import default_runs_dir
from ragmeter.report.table import coverage_note, offline_judge, offline_means
from ragmeter.trust.judge_uncertainty import judge_agreement


def _render(table) -> str:
    buf = io.StringIO()
    Console(file=buf, width=160, color_system=None).print(table)
    return buf.getvalue().rstrip()


def _row(table: Table, *cells: object) -> None:
    table.add_row(*(Text(safe(c)) for c in cells))


def _fmt(x, digits: int = 3) -> str:
    return "n/c" if x is None else f"{x:.{digits}f}"


def runs_table(runs) -> str:
    if not runs:
        return "no runs yet (ragmeter eval writes them)"
    t = Table("run", "status", "samples", "headline means", box=None)
    for r in runs:
        if r.setup.get("status") == "damaged":
            _row(t, r.name, "damaged", "-", str(r.setup.get("damage", "")))
            continue
        means = ", ".join(f"{m} {_fmt(v.get('mean'))}" for m, v in list(r.summary.items())[:4])
        _row(t, r.name, r.status, str(len(r.results)), means)
    out = _render(t)
    interrupted = [r for r in runs if r.status == "interrupted"]
    if interrupted:
        out += ("\ninterrupted (their process is gone): finish one with `ragmeter eval --resume "
                f"{_resumable(interrupted[-1].path)}`")
    return out


def _resumable(path: Path) -> str:
    """How ``--resume`` finds a run from here: its name where the runs folder is the default one
    (``$RAGMETER_RUNS_DIR``, else ``runs``), else its path."""
    if path.parent.resolve() == Path(default_runs_dir()).resolve():
        return path.name
    return shlex.quote(str(path))


def show_run(run) -> str:
    s = run.setup
    started = datetime.fromtimestamp(s.get("started", 0), timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = [safe(f"run {run.name}: {run.status}, ragmeter {s.get('ragmeter_version')}, started {started}"),
             safe(f"dataset {s.get('dataset', {}).get('path')} "
                  f"(fingerprint {s.get('dataset', {}).get('fingerprint')})")]
    if s.get("judge"):
        j = s["judge"]
        judges = [m.get("judge") for m in s.get("metrics", {}).values() if isinstance(m, dict) and m.get("judge")]
        if not j["input_tokens"] and not j["output_tokens"] and judges and offline_judge(judges[0]):
            lines.append(f"judge: {j['calls']} judgment{'' if j['calls'] == 1 else 's'} ({offline_means(judges[0])}), "
                         f"{j['cached']} from the ledger")
        else:
            lines.append(f"judge: {j['calls']} calls, {j['cached']} from the ledger, {j['input_tokens']} + "
                         f"{j['output_tokens']} tokens")
    t = Table("metric", "mean", "95% CI", "scored", "not computed", "failed", box=None)
    agreements = []
    for name, m in run.summary.items():
        ci = m.get("ci95")
        interval = "n = 1: no interval" if m["scored"] == 1 else f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-"
        _row(t, name, _fmt(m["mean"]), interval, str(m["scored"]), str(m["not_computed"]), str(m["failed"]))
        measured = judge_agreement(s.get("metrics", {}).get(name))
        if measured is not None:
            agreements.append(f"{name}: {measured.text()} ({measured.method})")
    lines.append(_render(t))
    lines.extend(agreements)
    lines.extend(f"{name}: {note.strip()[1:-1]}" for name, m in run.summary.items()
                 if (note := coverage_note(str(s.get("metrics", {}).get(name, {}).get("metric_name", name)),
                                           m["scored"], m.get("reasons") or {})))
    if not run.complete:
        if s.get("stopped_by"):
            lines.append(f"stopped by: {s['stopped_by']}")
        lines.append(f"incomplete: finish it with `ragmeter eval --resume {run.path}`")
    return "\n".join(lines)


def diagnosis_text(found) -> str:
    """Each query's failure points; the retrievals of one request (read from a trace) together,
    under a line for the request."""
    lines = []
    request = None
    for d in found:
        if d.request is not None and d.request != request:
            together = [x for x in found if x.request == d.request]
            labels = sorted({label for x in together for label in x.labels})
            lines.append(safe(f"request {d.request} ({len(together)} retrievals): "
                              + (", ".join(labels) or "no failure point found")))
        request = d.request
        pad = "    " if d.request is not None else ""
        lines.append(safe(f"{pad}{d.id}: {d.headline}"))
        for f in d.findings:
            lines.append(safe(f"{pad}    {f.label}: {f.evidence}"))
            if f.lever:
                lines.append(safe(f"{pad}        lever: {f.lever}"))
        lines.extend(safe(f"{pad}    unable to verify ({f.label}): {f.evidence}") for f in d.unverified)
    counts = count_labels(found)
    lines.append("")
    lines.append("queries per failure point: " + (", ".join(f"{k} {v}" for k, v in counts.items() if v) or "none"))
    unverified = sum(bool(d.unverified) for d in found)
    if unverified:
        lines.append(f"queries with checks that could not be verified: {unverified} (not counted as passed)")
    unchecked = sorted({f"{k} ({v})" for d in found for k, v in d.not_checked.items()})
    if unchecked:
        lines.append(safe("not checked: " + "; ".join(unchecked)))
    return "\n".join(lines)


#: The significance level of compare's direction column (gate's default ``--alpha``).
COMPARE_ALPHA = 0.05


def _diff(diff: float | None, higher_is_better: bool, p_holm: float = 0.0, alpha: float = COMPARE_ALPHA) -> str:
    """``+0.075 ^ better``: the signed difference with an arrow and what it means in the
    metric's direction (a rise in the contradiction rate is worse), only when the change is
    significant at ``alpha`` after Holm; otherwise ``+0.075 n.s.`` (as gate says "not significant").

    >>> _diff(0.075, True, p_holm=0.01), _diff(0.075, True, p_holm=1.0), _diff(0.02, False, p_holm=0.001)
    ('+0.075 ^ better', '+0.075 n.s.', '+0.020 ^ worse')
    """
    if diff is None:
        return "-"
    if diff == 0:
        return f"{diff:+.3f} = same"
    if not p_holm < alpha:
        return f"{diff:+.3f} n.s."
    return f"{diff:+.3f} {'^' if diff > 0 else 'v'} {'better' if (diff > 0) == higher_is_better else 'worse'}"


def comparison_text(cmp) -> str:
    lines = []
    if cmp.differences:
        lines.append("SETUP DIFFERS (compared anyway):")
        lines.extend(safe(f"  {d}") for d in cmp.differences)
    t = Table("metric", "better", "A", "B", "B - A", "95% CI", "p", "p (Holm)", "better/worse/tied", "moved most",
              box=None)
    for m in cmp.metrics:
        ci = f"[{m.ci95[0]:+.3f}, {m.ci95[1]:+.3f}]" if m.ci95 else "-"
        movers = ", ".join(f"{i} {d:+.2f}" for i, d in m.movers[:3])
        _row(t, m.metric, "higher" if m.higher_is_better else "lower", _fmt(m.mean_a), _fmt(m.mean_b),
             _diff(m.diff, m.higher_is_better, m.p_holm), ci,
             f"{m.p:.4f}", f"{m.p_holm:.4f}", f"{m.improved}/{m.worsened}/{m.tied}", movers)
    lines.append(_render(t))
    lines += [safe(line) for line in significance_legend(cmp.metrics, COMPARE_ALPHA)]
    if cmp.only_a or cmp.only_b:
        lines.append(safe(f"samples only in A: {', '.join(cmp.only_a) or '-'}; "
                          f"samples only in B: {', '.join(cmp.only_b) or '-'} (left out of the paired tests)"))
    if cmp.metrics_only_a or cmp.metrics_only_b:
        lines.append(safe(f"not compared, held by one run only: in A {', '.join(cmp.metrics_only_a) or '-'}; "
                          f"in B {', '.join(cmp.metrics_only_b) or '-'}"))
    return "\n".join(lines)
