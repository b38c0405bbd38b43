"""Terminal views of saved runs: the run list, one run's summary, the diagnosis."""

from __future__ import annotations

import io
from datetime import datetime, timezone

from rich.console import Console
from rich.table import Table

from ragmeter.analysis.diagnosis import count_labels
from ragmeter.analysis.judge_uncertainty import judge_agreement


def _render(table) -> str:
    buf = io.StringIO()
    Console(file=buf, width=160, color_system=None).print(table)
    return buf.getvalue().rstrip()


def _fmt(x, digits: int = 3) -> str:
    return "n/c" if x is None else f"{x:.{digits}f}"


def runs_table(runs) -> str:
    if not runs:
        return "no runs yet (ragmeter eval writes them)"
    t = Table("run", "status", "samples", "headline means", box=None)
    for r in runs:
        means = ", ".join(f"{m} {_fmt(v.get('mean'))}" for m, v in list(r.summary.items())[:4])
        t.add_row(r.name, r.status, str(len(r.results)), means)
    out = _render(t)
    interrupted = [r.name for r in runs if r.status == "interrupted"]
    if interrupted:
        out += ("\ninterrupted (their process is gone): finish one with `ragmeter eval --resume "
                f"{interrupted[-1]}`")
    return out


def show_run(run) -> str:
    s = run.setup
    started = datetime.fromtimestamp(s.get("started", 0), timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = [f"run {run.name}: {run.status}, ragmeter {s.get('ragmeter_version')}, started {started}",
             f"dataset {s.get('dataset', {}).get('path')} (fingerprint {s.get('dataset', {}).get('fingerprint')})"]
    if s.get("judge"):
        j = s["judge"]
        lines.append(f"judge: {j['calls']} calls, {j['cached']} from the ledger, {j['input_tokens']} + "
                     f"{j['output_tokens']} tokens")
    t = Table("metric", "mean", "95% CI", "scored", "not computed", "failed", box=None)
    agreements = []
    for name, m in run.summary.items():
        ci = m.get("ci95")
        interval = "n = 1: no interval" if m["scored"] == 1 else f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-"
        t.add_row(name, _fmt(m["mean"]), interval, str(m["scored"]), str(m["not_computed"]), str(m["failed"]))
        measured = judge_agreement(s.get("metrics", {}).get(name))
        if measured is not None:
            agreements.append(f"{name}: {measured.text()} ({measured.method})")
    lines.append(_render(t))
    lines.extend(agreements)
    if not run.complete:
        lines.append(f"incomplete: finish it with `ragmeter eval --resume {run.path}`")
    return "\n".join(lines)


def diagnosis_text(found) -> str:
    lines = []
    for d in found:
        lines.append(f"{d.id}: {', '.join(d.labels) or 'no failure point found'}")
        lines.extend(f"    {f.label}: {f.evidence}" for f in d.findings)
    counts = count_labels(found)
    lines.append("")
    lines.append("queries per failure point: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "none")
    unchecked = sorted({f"{k} ({v})" for d in found for k, v in d.not_checked.items()})
    if unchecked:
        lines.append("not checked: " + "; ".join(unchecked))
    return "\n".join(lines)


def comparison_text(cmp) -> str:
    lines = []
    if cmp.differences:
        lines.append("SETUP DIFFERS (compared anyway):")
        lines.extend(f"  {d}" for d in cmp.differences)
    t = Table("metric", "A", "B", "B - A", "95% CI", "p", "p (Holm)", "up/down/tied", "moved most", box=None)
    for m in cmp.metrics:
        ci = f"[{m.ci95[0]:+.3f}, {m.ci95[1]:+.3f}]" if m.ci95 else "-"
        movers = ", ".join(f"{i} {d:+.2f}" for i, d in m.movers[:3])
        t.add_row(m.metric, _fmt(m.mean_a), _fmt(m.mean_b), "-" if m.diff is None else f"{m.diff:+.3f}", ci,
                  f"{m.p:.4f}", f"{m.p_holm:.4f}", f"{m.improved}/{m.worsened}/{m.tied}", movers)
    lines.append(_render(t))
    if cmp.only_a or cmp.only_b:
        lines.append(f"samples only in A: {', '.join(cmp.only_a) or '-'}; "
                     f"samples only in B: {', '.join(cmp.only_b) or '-'} (left out of the paired tests)")
    if cmp.metrics_only_a or cmp.metrics_only_b:
        lines.append(f"not compared, held by one run only: in A {', '.join(cmp.metrics_only_a) or '-'}; "
                     f"in B {', '.join(cmp.metrics_only_b) or '-'}")
    return "\n".join(lines)
