"""The ``ragmeter`` command: parse arguments, call the library, render. No maths here."""

from __future__ import annotations

import functools
import json
import os
import sys
from typing import Callable, List, Optional

import typer

from ragmeter.core.errors import RagmeterError

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
    judge: Optional[str] = typer.Option(None, "--judge", help="openai:<model>, anthropic:<model>, local (bundled offline model; the default when "
                                                          "ragmeter[local] is installed), local:<file.gguf>, or none"),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url",
                                                 help="the judge server's URL (vLLM, Ollama, llama.cpp, LiteLLM ...)"),
    embedder: str = typer.Option("minilm", "--embedder", help="embedding model: minilm (bundled, offline), "
                                                             "sentence-transformers:<model> or openai:<model>"),
    ledger: Optional[str] = typer.Option(None, "--ledger", help="judgment store (default: <runs-dir>/ledger.sqlite)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the judge calls and tokens needed, call nothing"),
    budget_tokens: Optional[int] = typer.Option(None, "--budget", help="stop before judge tokens would pass this cap"),
    budget_usd: Optional[float] = typer.Option(None, "--budget-usd", help="stop before the judge's cost would pass this "
                                                                          "(needs --price-in/--price-out)"),
    price_in: Optional[float] = typer.Option(None, "--price-in", help="USD per million input tokens (for cost)"),
    price_out: Optional[float] = typer.Option(None, "--price-out", help="USD per million output tokens (for cost)"),
    concurrency: int = typer.Option(8, "--concurrency", help="judge requests in flight at most"),
    max_reasks: int = typer.Option(2, "--max-reasks", help="re-asks for a reply that does not validate"),
    timeout: float = typer.Option(60.0, "--timeout", help="seconds per judge call"),
    runs_dir: str = typer.Option(os.environ.get("RAGMETER_RUNS_DIR", "runs"), "--runs-dir",
                                 help="where run directories go"),
    name: str = typer.Option("eval", "--name", help="run name (the directory is <timestamp>-<name>)"),
    save: bool = typer.Option(True, "--save/--no-save", help="write a run directory"),
    resume: Optional[str] = typer.Option(None, "--resume", help="finish an interrupted run directory"),
    criteria: Optional[str] = typer.Option(None, "--criteria", help="rubric criteria file (JSON or YAML)"),
    block: Optional[int] = typer.Option(None, "--block", help="stream a JSONL dataset larger than memory, N samples "
                                                              "at a time (prints the means, writes the run)"),
    engine: str = typer.Option("local", "--engine", help="local, or ray (pip install 'ragmeter[ray]')"),
    address: Optional[str] = typer.Option(None, "--address", help="Ray cluster: auto or HOST:PORT (default: start one)"),
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
                   "concurrency": concurrency, "timeout": timeout, "criteria": criteria,
                   "price_in": price_in, "price_out": price_out, "embedder": embedder}
        if judge == "none":
            options["judge"] = None  # explicitly no judge: judged metrics are not computed
        elif not judge and _wants_judge(options):
            from ragmeter.judges.local_model import local_available

            if local_available():  # offline by default: the bundled judge, when its extra is installed
                options["judge"] = "local"
                typer.echo("no --judge given: using the bundled local judge (offline)", err=True)
        run_path = new_run_path(runs_dir, name) if save and not dry_run else None
        setup = start_run(run_path, options) if run_path else None
    if budget_usd is not None and (options.get("price_in") is None or options.get("price_out") is None):
        raise typer.BadParameter("a budget in dollars needs --price-in and --price-out", param_hint="--budget-usd")
    the_judge = _make_judge(options, budget_tokens, budget_usd)
    if block:
        _stream(options, block, the_judge, run_path, setup, fmt)
        return
    data = _load(options)
    if dry_run:
        typer.echo(json.dumps(dry_run_plan(data, options["metrics"], options["k"] or None, options["view"], the_judge),
                              indent=2))
        return
    if engine == "ray":
        from ragmeter.engine.distributed import evaluate_ray

        spec = ({"judge": options["judge"], "base_url": options.get("judge_base_url"),
                 "concurrency": options.get("concurrency", 8), "timeout": options.get("timeout", 60.0),
                 "max_reasks": options.get("max_reasks", 2)} if options.get("judge") else None)
        result = evaluate_ray(data, options["metrics"], k=options["k"] or None, view=options["view"], judge_spec=spec,
                              ledger=options["ledger"], address=address, concurrency=options.get("concurrency", 8),
                              embedder=options.get("embedder"), criteria=_criteria(options))
    elif engine == "local":
        result = _evaluate(data, options, the_judge)
    else:
        raise typer.BadParameter("use local or ray", param_hint="--engine")
    if run_path is not None:
        finish_run(run_path, setup, result)
    if fmt == "json":
        typer.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    elif fmt == "csv":
        typer.echo(results_csv(result), nl=False)
    else:
        from ragmeter.report import render_table  # here, not at the top: ``ragmeter trec`` need not load the engine

        typer.echo(render_table(result))
        if result.judge_stats is not None:
            typer.echo(judge_line(options["judge"], result, options.get("price_in"), options.get("price_out")))
        if run_path is not None:
            typer.echo(f"run saved: {run_path}")


def _stream(options: dict, block: int, the_judge, run_path, setup, fmt: str) -> None:
    from ragmeter.engine import resolve_measures
    from ragmeter.runs.blockwise import evaluate_streaming

    if options.get("only") or not options["dataset"].lower().endswith((".jsonl", ".ndjson")):
        raise typer.BadParameter("--block streams a JSONL dataset (without --only)", param_hint="--block")
    summary, dataset = evaluate_streaming(options["dataset"], options["metrics"], block=block, run_path=run_path,
                                          setup=setup, corpus=options.get("corpus"), k=options["k"] or None,
                                          view=options["view"], judge=the_judge, criteria=_criteria(options),
                                          embedder=_make_embedder(options))
    if fmt == "json":
        typer.echo(json.dumps({"dataset": dataset, "metrics": summary}, indent=2))
        return
    measures = resolve_measures(options["metrics"], options["k"] or None, view=options["view"])
    parts = [f"{m.mean_label} {'n/c' if summary[str(m)]['mean'] is None else format(summary[str(m)]['mean'], '.3f')}"
             for m in measures]
    typer.echo(f"{dataset['samples']} samples, streamed in blocks of {block}")
    typer.echo("mean   " + " | ".join(parts))
    for m in measures:
        s = summary[str(m)]
        typer.echo(f"{m}: {s['scored']} scored, {s['not_computed']} not computed, {s['failed']} failed")
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


def _wants_judge(options: dict) -> bool:
    from ragmeter.engine.evaluate import resolve_measures
    from ragmeter.metrics import JudgedSpec

    return any(isinstance(m.spec, JudgedSpec)
               for m in resolve_measures(options["metrics"], options["k"] or None, view=options["view"]))


def _make_judge(options: dict, budget_tokens: int | None, budget_usd: float | None = None):
    if not options.get("judge"):
        return None
    from ragmeter.judges import Budget, Judge, RetryPolicy, make_backend
    from ragmeter.ledger import Ledger

    backend = make_backend(options["judge"], base_url=options.get("judge_base_url"),
                           concurrency=options.get("concurrency", 8), policy=RetryPolicy(timeout=options.get("timeout", 60)))
    budget = None
    if budget_tokens or budget_usd is not None:
        budget = Budget(max_tokens=budget_tokens, max_usd=budget_usd, price_in=options.get("price_in"),
                        price_out=options.get("price_out"))
    return Judge(backend, ledger=Ledger(options["ledger"]), max_reasks=options.get("max_reasks", 2), budget=budget)


def _make_embedder(options: dict):
    spec = options.get("embedder") or "minilm"
    if spec == "minilm":
        return None  # the engine loads the bundled model only when a metric needs it
    from ragmeter.embeddings import make_embedder

    return make_embedder(spec)


def _criteria(options: dict):
    from ragmeter.metrics.generation.rubric import load_criteria

    return load_criteria(options["criteria"]) if options.get("criteria") else None


def _evaluate(data, options: dict, the_judge):
    from ragmeter.engine import evaluate
    from ragmeter.report.progress import JudgeProgress

    kwargs = dict(k=options["k"] or None, view=options["view"], judge=the_judge, criteria=_criteria(options),
                  embedder=_make_embedder(options))
    if the_judge is None or not sys.stderr.isatty():
        return evaluate(data, options["metrics"], **kwargs)
    with JudgeProgress(the_judge) as progress:
        return evaluate(data, options["metrics"], progress=progress, **kwargs)


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
    from ragmeter.engine import resolve_measures
    from ragmeter.engine.planner import plan_calls
    from ragmeter.metrics import JudgedSpec

    measures = [m for m in resolve_measures(metrics, k, view=view) if isinstance(m.spec, JudgedSpec)]
    if not measures:
        return {"calls": 0, "note": "no judged metric requested"}
    if judge is None:
        raise typer.BadParameter("a dry run of judged metrics needs --judge", param_hint="--dry-run")
    needs = set().union(*(m.spec.needs(m) for m in measures if isinstance(m.spec, JudgedSpec)))
    return plan_calls(data.samples, needs, judge)


def judge_line(spec: str, result, price_in: float | None = None, price_out: float | None = None) -> str:
    st = result.judge_stats
    line = (f"judge {spec}: {st['calls']} calls ({result.calls_per_sample:.1f} per sample), {st['reasks']} re-asks, "
            f"{st['cached']} from the ledger, {st['failed']} failed, {st['input_tokens']} input + "
            f"{st['output_tokens']} output tokens")
    if price_in is not None and price_out is not None:
        line += f", about ${(st['input_tokens'] * price_in + st['output_tokens'] * price_out) / 1e6:.4f}"
    return line


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


# The other commands live in their own modules; importing them registers them on ``app``.
from ragmeter.cli import analysis_cmd, judge_cmd, trec_cmd, watch_cmd  # noqa: E402,F401
from ragmeter.cli import import_cmd, label_cmd, testset_cmd  # noqa: E402,F401  (building the evaluation set)


def run() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover - `python -m ragmeter` is the supported form
    from ragmeter.cli.main import run as _run  # the imported module holds every registered command

    _run()
