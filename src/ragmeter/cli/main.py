"""The ``ragmeter`` command: parse arguments, call the library, render. No maths here."""

from __future__ import annotations

import functools
import json
import os
import sys
from typing import Callable, List, Optional

import typer

from ragmeter.core.errors import RagmeterError
from ragmeter.report import render_table

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Measure every stage of a RAG pipeline: retrieval, context and answers.")


def friendly(fn: Callable) -> Callable:
    """Turn ragmeter's own errors into one clear line on stderr and exit status 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RagmeterError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None

    return wrapper


def split_metrics(values: Optional[List[str]]) -> Optional[List[str]]:
    """``--metrics a,b --metrics c`` -> [a, b, c]; commas inside parentheses are kept."""
    if not values:
        return None
    out: list[str] = []
    for value in values:
        depth, start = 0, 0
        for i, ch in enumerate(value):
            depth += ch == "("
            depth -= ch == ")"
            if ch == "," and depth == 0:
                out.append(value[start:i])
                start = i + 1
        out.append(value[start:])
    return [m.strip() for m in out if m.strip()]


@app.command("eval")
@friendly
def eval_command(
    dataset: Optional[str] = typer.Argument(None, help="dataset file (.jsonl or .csv)"),
    corpus: Optional[str] = typer.Option(None, "--corpus", help="chunk id -> text file (.jsonl or .csv)"),
    k: int = typer.Option(5, "--k", "-k", help="cut-off for the retrieved list; 0 = the whole list"),
    metrics: Optional[List[str]] = typer.Option(None, "--metrics", "-m", help="comma-separated measures, e.g. ndcg@10,mrr"),
    view: Optional[str] = typer.Option(None, "--view", help="retrieved (default), context (what reached the prompt), or both"),
    only: Optional[str] = typer.Option(None, "--only", help="comma-separated sample ids to score"),
    fmt: str = typer.Option("table", "--format", "-f", help="table, json or csv"),
    judge: Optional[str] = typer.Option(None, "--judge", help="openai:<model> or anthropic:<model> for claim metrics"),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url",
                                                 help="the judge server's URL (vLLM, Ollama, llama.cpp, LiteLLM ...)"),
    ledger: Optional[str] = typer.Option(None, "--ledger", help="judgment store (default: <runs-dir>/ledger.sqlite)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the judge calls and tokens needed, call nothing"),
    budget_tokens: Optional[int] = typer.Option(None, "--budget", help="stop before judge tokens would pass this cap"),
    concurrency: int = typer.Option(8, "--concurrency", help="judge requests in flight at most"),
    max_reasks: int = typer.Option(2, "--max-reasks", help="re-asks for a reply that does not validate"),
    timeout: float = typer.Option(60.0, "--timeout", help="seconds per judge call"),
    runs_dir: str = typer.Option(os.environ.get("RAGMETER_RUNS_DIR", "runs"), "--runs-dir",
                                 help="where run directories go"),
    name: str = typer.Option("eval", "--name", help="run name (the directory is <timestamp>-<name>)"),
    save: bool = typer.Option(True, "--save/--no-save", help="write a run directory"),
    resume: Optional[str] = typer.Option(None, "--resume", help="finish an interrupted run directory"),
    criteria: Optional[str] = typer.Option(None, "--criteria", help="rubric criteria file (JSON or YAML)"),
) -> None:
    """Score a dataset: label metrics, and claim metrics through a judge; print the table and means."""
    from pathlib import Path

    from ragmeter.runs import finish_run, load_run, new_run_path, start_run

    if fmt not in ("table", "json", "csv"):
        raise typer.BadParameter("use table, json or csv", param_hint="--format")
    if resume:
        run = load_run(resume)
        options = run.setup["options"]
        run_path, setup = run.path, run.setup
    else:
        if dataset is None:
            raise typer.BadParameter("give a dataset file (or --resume RUN)", param_hint="DATASET")
        options = {"dataset": dataset, "corpus": corpus, "k": k, "metrics": split_metrics(metrics), "view": view,
                   "only": only, "judge": judge, "judge_base_url": judge_base_url,
                   "ledger": ledger or str(Path(runs_dir) / "ledger.sqlite"), "max_reasks": max_reasks,
                   "concurrency": concurrency, "timeout": timeout, "criteria": criteria}
        run_path = new_run_path(runs_dir, name) if save and not dry_run else None
        setup = start_run(run_path, options) if run_path else None
    data = _load(options)
    the_judge = _make_judge(options, budget_tokens)
    if dry_run:
        typer.echo(json.dumps(dry_run_plan(data, options["metrics"], options["k"] or None, options["view"], the_judge),
                              indent=2))
        return
    result = _evaluate(data, options, the_judge)
    if run_path is not None:
        finish_run(run_path, setup, result)
    if fmt == "json":
        typer.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    elif fmt == "csv":
        typer.echo(results_csv(result), nl=False)
    else:
        typer.echo(render_table(result))
        if result.judge_stats is not None:
            typer.echo(judge_line(options["judge"], result))
        if run_path is not None:
            typer.echo(f"run saved: {run_path}")


def _load(options: dict):
    from ragmeter.io import from_samples, load_dataset

    data = load_dataset(options["dataset"], corpus=options.get("corpus"))
    if options.get("only"):
        wanted = [x.strip() for x in options["only"].split(",") if x.strip()]
        known = {s.id for s in data.samples}
        missing = [w for w in wanted if w not in known]
        if missing:
            raise typer.BadParameter(f"no sample with id {', '.join(map(repr, missing))}", param_hint="--only")
        data = from_samples([s for s in data.samples if s.id in set(wanted)], path=data.path)
    return data


def _make_judge(options: dict, budget_tokens: int | None):
    if not options.get("judge"):
        return None
    from ragmeter.judges import Budget, Judge, RetryPolicy, make_backend
    from ragmeter.ledger import Ledger

    backend = make_backend(options["judge"], base_url=options.get("judge_base_url"),
                           concurrency=options.get("concurrency", 8), policy=RetryPolicy(timeout=options.get("timeout", 60)))
    return Judge(backend, ledger=Ledger(options["ledger"]), max_reasks=options.get("max_reasks", 2),
                 budget=Budget(max_tokens=budget_tokens) if budget_tokens else None)


def _evaluate(data, options: dict, the_judge):
    from ragmeter.engine import evaluate
    from ragmeter.report.progress import JudgeProgress

    from ragmeter.metrics.generation.rubric import load_criteria

    criteria = load_criteria(options["criteria"]) if options.get("criteria") else None
    kwargs = dict(k=options["k"] or None, view=options["view"], judge=the_judge, criteria=criteria)
    if the_judge is None or not sys.stderr.isatty():
        return evaluate(data, options["metrics"], **kwargs)
    with JudgeProgress(the_judge) as progress:
        return evaluate(data, options["metrics"], on_judged=progress, **kwargs)


def results_csv(result) -> str:
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["sample_id", "metric", "status", "value", "reason"])
    for row in result.to_dict()["samples"]:
        for metric, cell in row["metrics"].items():
            writer.writerow([row["id"], metric, cell["status"], "" if cell["value"] is None else repr(cell["value"]),
                             cell.get("reason") or cell.get("error") or ""])
    return buf.getvalue()


def dry_run_plan(data, metrics, k, view, judge) -> dict:
    from ragmeter.claims.evidence import plan_calls
    from ragmeter.engine import resolve_measures

    measures = [m for m in resolve_measures(metrics, k, view=view) if m.spec.judged]
    if not measures:
        return {"calls": 0, "note": "no judged metric requested"}
    if judge is None:
        raise typer.BadParameter("a dry run of judged metrics needs --judge", param_hint="--dry-run")
    needs = set().union(*(m.needs for m in measures))
    return plan_calls(data.samples, needs, judge)


def judge_line(spec: str, result) -> str:
    st = result.judge_stats
    return (f"judge {spec}: {st['calls']} calls ({result.calls_per_sample:.1f} per sample), {st['reasks']} re-asks, "
            f"{st['cached']} from the ledger, {st['failed']} failed, {st['input_tokens']} input + "
            f"{st['output_tokens']} output tokens")


@app.command("trec")
@friendly
def trec_command(
    qrels: str = typer.Argument(..., help="qrels file: qid iter docno rel"),
    run: str = typer.Argument(..., help="run file: qid Q0 docno rank score runid"),
    measures: Optional[List[str]] = typer.Option(None, "-m", "--measure",
                                                 help="trec_eval measure (P.5,10 / ndcg_cut.10 / official / all_trec) "
                                                      "or a ragmeter measure (mrr@10); repeatable"),
    per_query: bool = typer.Option(False, "-q", help="print every topic's values before the summary"),
    complete: bool = typer.Option(False, "-c", help="average over all qrels topics; missing ones score 0"),
    level: int = typer.Option(1, "-l", help="relevance level: grades >= level are relevant (not used by ndcg)"),
    max_docs: Optional[int] = typer.Option(None, "-M", help="evaluate only the top DEPTH documents per topic"),
    judged_only: bool = typer.Option(False, "-J", help="drop unjudged documents before evaluating"),
    iprec_rule: str = typer.Option("v10", "--iprec-rule", help="v10 (lround) or v9 (+0.9 truncation) recall cut-offs"),
    fmt: str = typer.Option("trec", "--format", "-f", help="trec (trec_eval's text) or json"),
) -> None:
    """trec_eval's numbers, exactly, for a TREC run against qrels."""
    from ragmeter.trec import evaluate_trec
    from ragmeter.trec.measures import UNSUPPORTED
    from ragmeter.trec.output import lines

    wanted = measures or ["official"]
    result = evaluate_trec(qrels, run, wanted, level=level, complete=complete, max_docs=max_docs,
                           judged_only=judged_only, iprec_rule=iprec_rule)
    if result.missing and not complete:
        typer.echo(f"note: {len(result.missing)} qrels topic(s) have no results and are left out of the "
                   f"averages (use -c to count them as 0): {', '.join(result.missing[:10])}"
                   + (" ..." if len(result.missing) > 10 else ""), err=True)
    if "all_trec" in wanted:
        typer.echo(f"note: not computed by ragmeter: {', '.join(sorted(UNSUPPORTED))}", err=True)
    if any(n.startswith("ragmeter:") for n in result.names):
        typer.echo("note: lines named ragmeter:* are ragmeter measures, not trec_eval measures", err=True)
    if fmt == "json":
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        typer.echo("\n".join(lines(result, per_query=per_query)))


@app.command("runs")
@friendly
def runs_command(runs_dir: str = typer.Argument(os.environ.get("RAGMETER_RUNS_DIR", "runs"))) -> None:
    """List runs with their status and headline means."""
    from ragmeter.report.terminal import runs_table
    from ragmeter.runs import list_runs

    typer.echo(runs_table(list_runs(runs_dir)))


@app.command("show")
@friendly
def show_command(run: str = typer.Argument(..., help="a run directory")) -> None:
    """Print a run's setup and summary: means, 95% intervals and coverage."""
    from ragmeter.report.terminal import show_run
    from ragmeter.runs import load_run

    typer.echo(show_run(load_run(run)))


@app.command("report")
@friendly
def report_command(run: str = typer.Argument(..., help="a run directory"),
                   html_path: str = typer.Option(..., "--html", help="where to write the HTML report")) -> None:
    """Write a self-contained HTML report of a run (no CDN, no network, works from file://)."""
    from ragmeter.report.html import write_html
    from ragmeter.runs import load_run

    write_html(load_run(run), html_path)
    typer.echo(f"report written: {html_path}")


@app.command("diagnose")
@friendly
def diagnose_command(run: str = typer.Argument(..., help="a run directory"),
                     fmt: str = typer.Option("table", "--format", "-f", help="table or json")) -> None:
    """Label each query with the failure points its scores show, with the evidence."""
    from ragmeter.analysis.diagnosis import count_labels, diagnose
    from ragmeter.report.terminal import diagnosis_text
    from ragmeter.runs import load_run

    r = load_run(run)
    found = diagnose(r.samples(), r.results)
    if fmt == "json":
        typer.echo(json.dumps({"queries": [d.as_dict() for d in found], "counts": count_labels(found)}, indent=2))
    else:
        typer.echo(diagnosis_text(found))


@app.command("compare")
@friendly
def compare_command(
    run_a: str = typer.Argument(..., help="the baseline run directory"),
    run_b: str = typer.Argument(..., help="the new run directory"),
    metrics: Optional[List[str]] = typer.Option(None, "--metric", "-m", help="compare only these metrics"),
    allow_setup_change: bool = typer.Option(False, "--allow-setup-change", help="compare runs whose setups differ"),
    fmt: str = typer.Option("table", "--format", "-f", help="table or json"),
) -> None:
    """Compare two runs per metric: paired difference, 95% interval, p-value (Holm), movers."""
    from ragmeter.analysis.compare import compare_runs
    from ragmeter.report.terminal import comparison_text
    from ragmeter.runs import load_run

    cmp = compare_runs(load_run(run_a), load_run(run_b), metrics=split_metrics(metrics),
                       allow_setup_change=allow_setup_change)
    typer.echo(json.dumps(cmp.as_dict(), indent=2) if fmt == "json" else comparison_text(cmp))


@app.command("gate")
def gate_command(
    run: str = typer.Argument(..., help="the new run directory"),
    baseline: str = typer.Option(..., "--baseline", help="the baseline run directory"),
    max_drop: float = typer.Option(0.02, "--max-drop", help="the largest allowed significant drop"),
    metrics: Optional[List[str]] = typer.Option(None, "--metric", "-m", help="gate only these metrics"),
    floors: Optional[List[str]] = typer.Option(None, "--min", help="METRIC=VALUE: a floor the run's mean must reach"),
    alpha: float = typer.Option(0.05, "--alpha", help="significance level after Holm's correction"),
    allow_setup_change: bool = typer.Option(False, "--allow-setup-change"),
    fmt: str = typer.Option("text", "--format", "-f", help="text, json or markdown"),
) -> None:
    """Exit 0 when the run holds up against the baseline, 1 when it does not, 2 on a setup mismatch."""
    from ragmeter.analysis.gate import gate, markdown
    from ragmeter.runs import load_run

    try:
        parsed = {}
        for item in floors or []:
            name, sep, value = item.rpartition("=")
            if not sep or not name:
                raise typer.BadParameter(f"write METRIC=VALUE, got {item!r}", param_hint="--min")
            parsed[name] = float(value)
        result = gate(load_run(run), load_run(baseline), max_drop=max_drop, metrics=split_metrics(metrics),
                      floors=parsed, alpha=alpha, allow_setup_change=allow_setup_change)
    except (RagmeterError, typer.BadParameter, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if fmt == "json":
        typer.echo(json.dumps(result.as_dict(), indent=2))
    elif fmt == "markdown":
        typer.echo(markdown(result))
    else:
        typer.echo("gate passed" if result.passed else "gate failed:\n  " + "\n  ".join(result.failures))
    raise typer.Exit(0 if result.passed else 1)


@app.command("correlate")
@friendly
def correlate_command(run: str = typer.Argument(..., help="a run directory"),
                      fmt: str = typer.Option("table", "--format", "-f", help="table or json")) -> None:
    """Spearman correlation between metrics across queries; expected pairs that diverge are flagged."""
    from ragmeter.analysis.correlate import correlate
    from ragmeter.runs import load_run

    pairs = correlate(load_run(run))
    if fmt == "json":
        typer.echo(json.dumps([{"a": p.a, "b": p.b, "rho": p.rho, "n": p.n, "expected": p.expected,
                                "diverges": p.diverges} for p in pairs], indent=2))
        return
    for p in pairs:
        rho = "n/a" if p.rho is None else f"{p.rho:+.2f}"
        flag = f"  DIVERGES (expected > {p.expected}: {p.meaning})" if p.diverges else (
            f"  (expected > {p.expected})" if p.expected is not None else "")
        typer.echo(f"{p.a} ~ {p.b}: rho {rho} over {p.n} queries{flag}")


def _samples(path: str):
    from pathlib import Path

    from ragmeter.io import load_dataset
    from ragmeter.runs import load_run

    return load_run(path).samples() if Path(path).is_dir() else load_dataset(path).samples


@app.command("pairwise")
@friendly
def pairwise_command(
    a: str = typer.Argument(..., help="run directory or dataset with system A's answers"),
    b: Optional[str] = typer.Argument(None, help="run directory or dataset with system B's answers"),
    b_field: Optional[str] = typer.Option(None, "--b-field", help="compare `answer` with metadata[B_FIELD] of A"),
    judge: str = typer.Option(..., "--judge", help="openai:<model> or anthropic:<model>"),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url"),
    ledger: str = typer.Option(os.path.join(os.environ.get("RAGMETER_RUNS_DIR", "runs"), "ledger.sqlite"), "--ledger"),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json"),
) -> None:
    """Which answer is better, per question, asked in both orders: wins, ties, position and length bias."""
    import dataclasses

    from ragmeter.analysis.pairwise import pairwise

    samples_a = _samples(a)
    if b_field:
        samples_b = [dataclasses.replace(s, answer=s.metadata.get(b_field)) for s in samples_a]
    elif b:
        samples_b = _samples(b)
    else:
        raise typer.BadParameter("give system B (a run or dataset) or --b-field", param_hint="B")
    options = {"judge": judge, "judge_base_url": judge_base_url, "ledger": ledger}
    result = pairwise(samples_a, samples_b, _make_judge(options, None))
    if fmt == "json":
        typer.echo(json.dumps(result.as_dict(), indent=2))
        return
    d = result.as_dict()
    ci = d["win_rate_ci95"]
    typer.echo(f"B vs A: {d['wins']} wins, {d['ties']} ties, {d['losses']} losses ({d['failed']} failed)")
    if d["win_rate"] is not None:
        typer.echo(f"B's win rate {d['win_rate']:.3f} (ties count 1/2), 95% CI [{ci[0]:.3f}, {ci[1]:.3f}]")
        typer.echo(f"position bias: {d['position_bias_rate']:.3f} of pairs flipped with the order (recorded as ties)")
        lb = d["length_bias"]
        typer.echo(f"length bias: the longer answer won {lb['longer_won']} of {lb['decisive_with_length_difference']} "
                   f"decisive pairs (binomial p={lb['p']:.4f})")


@app.command("agreement")
@friendly
def agreement_command(
    run: str = typer.Argument(..., help="a run directory"),
    labels: str = typer.Option(..., "--labels", help="human labels: JSONL or CSV with id and one column per metric"),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json"),
) -> None:
    """Judge vs human labels per metric: kappa, Spearman, Kendall, confusion, and the PPI-corrected mean."""
    from ragmeter.analysis.agreement import agreement
    from ragmeter.io.labels import load_labels
    from ragmeter.runs import load_run

    r = load_run(run)
    human = load_labels(labels)
    found = [agreement(r.values(metric), values, metric) for metric, values in human.items() if metric in r.summary]
    if not found:
        raise typer.BadParameter(f"no label column matches a metric of the run ({', '.join(r.summary)})",
                                 param_hint="--labels")
    if fmt == "json":
        typer.echo(json.dumps([a.as_dict() for a in found], indent=2))
        return
    for a in found:
        fmt3 = lambda x: "n/a" if x is None else f"{x:.3f}"  # noqa: E731
        ppi = f"{fmt3(a.ppi)} [{a.ppi_ci95[0]:.3f}, {a.ppi_ci95[1]:.3f}]" if a.ppi_ci95 else "n/a"
        typer.echo(f"{a.metric}: {a.n} labeled; judge mean {fmt3(a.judge_mean)}, PPI-corrected {ppi}; "
                   f"kappa {fmt3(a.kappa)}, Spearman {fmt3(a.spearman)}, Kendall {fmt3(a.kendall)}")
        if a.confusion:
            typer.echo("    confusion: " + ", ".join(f"{k} {v}" for k, v in a.confusion.items()))


@app.command("turns")
@friendly
def turns_command(run: str = typer.Argument(..., help="a run directory of a conversation dataset"),
                  svg: Optional[str] = typer.Option(None, "--svg", help="also write a plot of the means by turn"),
                  fmt: str = typer.Option("text", "--format", "-f", help="text or json")) -> None:
    """Scores by turn index (1, 2, 3+) and standalone vs non-standalone turns."""
    from ragmeter.analysis.turns import by_turn, svg_plot
    from ragmeter.runs import load_run

    r = load_run(run)
    table = by_turn(r.samples(), r.results)
    if not table["turns"]:
        raise typer.BadParameter("the run has no conversation turns", param_hint="RUN")
    if svg:
        with open(svg, "w", encoding="utf-8") as f:
            f.write(svg_plot(table))
    if fmt == "json":
        typer.echo(json.dumps(table, indent=2))
        return
    for title, groups in (("by turn", table["turns"]), ("by question kind", table["standalone"])):
        typer.echo(title + ":")
        for group, metrics in groups.items():
            cells = ", ".join(f"{m} {v['mean']:.3f} (n={v['n']})" for m, v in metrics.items())
            typer.echo(f"  {group:<15} {cells}")


@app.command("watch")
@friendly
def watch_command(
    log: str = typer.Argument(..., help="the JSONL request log your app appends to (or exported OTel spans)"),
    judge: str = typer.Option(..., "--judge", help="openai:<model> or anthropic:<model>"),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url"),
    metrics: Optional[List[str]] = typer.Option(None, "--metrics", "-m", help="default: faithfulness,answer_relevancy"),
    sample_rate: float = typer.Option(1.0, "--sample-rate", help="share of requests scored (deterministic by id)"),
    window: int = typer.Option(100, "--window", help="the rolling window: last N scored requests"),
    state: str = typer.Option("ragmeter-watch", "--state", help="offset, scored results and ledger live here"),
    host: str = typer.Option("127.0.0.1", "--host", help="where /metrics listens (loopback by default)"),
    port: int = typer.Option(9464, "--port", help="the Prometheus port; 0 = no endpoint"),
    interval: float = typer.Option(2.0, "--interval", help="seconds between polls"),
    alert: Optional[List[str]] = typer.Option(None, "--alert", help="METRIC<VALUE: alert when the rolling mean falls below"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="a run whose means the traffic is checked against"),
    max_drop: float = typer.Option(0.05, "--max-drop", help="a significant drop from the baseline larger than this alerts"),
    alert_command: Optional[str] = typer.Option(None, "--alert-command", help="run on an alert, with $RAGMETER_ALERT set"),
    exit_on_alert: bool = typer.Option(False, "--exit-on-alert", help="exit with status 3 on the first alert"),
    once: bool = typer.Option(False, "--once", help="score everything the log holds now, then exit"),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", help="stop after this long"),
) -> None:
    """Score a sample of live traffic, keep rolling windows, expose them to Prometheus, alert."""
    import time
    from pathlib import Path

    from ragmeter.live.watch import Alert, Watcher, serve
    from ragmeter.runs import load_run

    wanted = split_metrics(metrics) or ["faithfulness", "answer_relevancy"]
    alerts = []
    for item in alert or []:
        name, sep, value = item.partition("<")
        if not sep:
            raise typer.BadParameter(f"write METRIC<VALUE, got {item!r}", param_hint="--alert")
        alerts.append(Alert(name.strip(), below=float(value)))
    if baseline:
        base = load_run(baseline)
        for m in wanted:
            values = [v for v in base.values(m).values() if v is not None]
            if values:
                alerts.append(Alert(m, baseline=values, max_drop=max_drop))
    registry = None
    if port:
        try:
            from prometheus_client import CollectorRegistry
        except ImportError:
            raise typer.BadParameter("the /metrics endpoint needs prometheus_client: pip install 'ragmeter[live]' "
                                     "(or --port 0)", param_hint="--port") from None
        registry = CollectorRegistry()
    options = {"judge": judge, "judge_base_url": judge_base_url, "ledger": str(Path(state) / "ledger.sqlite")}
    watcher = Watcher(log, _make_judge(options, None), Path(state), metrics=wanted, sample_rate=sample_rate,
                      window=window, alerts=alerts, alert_command=alert_command, registry=registry)
    if registry is not None:
        serve(registry, host, port)
        typer.echo(f"metrics on http://{host}:{port}/metrics", err=True)
    start = time.monotonic()
    while True:
        scored = watcher.poll()
        if scored:
            summary = watcher.window_summary()
            typer.echo(f"scored {scored} new; last {window}: " + ", ".join(
                f"{m} {s['mean']:.3f}" for m, s in summary.items() if s["mean"] is not None), err=True)
        for message in watcher.fired:
            typer.echo(f"ALERT: {message}", err=True)
        if watcher.fired and exit_on_alert:
            raise typer.Exit(3)
        if watcher.pending:
            continue  # more complete lines wait: no sleep
        if once or (max_seconds is not None and time.monotonic() - start > max_seconds):
            break
        time.sleep(interval)


@app.command("metrics")
def metrics_command() -> None:
    """List every registered metric with its definition, parameters and source."""
    from ragmeter.metrics import REGISTRY

    for spec in REGISTRY.values():
        typer.echo(f"{spec.name} (v{spec.version}, {spec.family})")
        typer.echo(f"    {spec.definition}")
        if spec.params:
            params = ", ".join(f"{n}={p.default!r}" + (f" {list(p.choices)}" if p.choices else "")
                               for n, p in spec.params.items())
            typer.echo(f"    params: {params}")
        if spec.aliases:
            typer.echo(f"    aliases: {', '.join(spec.aliases)}")
        typer.echo(f"    source: {spec.source}")


def run() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run())
