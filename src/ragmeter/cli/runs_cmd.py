"""Commands that read one run or the registry: runs, show, report, diagnose, metrics."""

from __future__ import annotations

import json

import typer

from ragmeter.cli.app import RUN_HELP, app, format_option, friendly, runs_dir_option
from ragmeter.core.settings import default_runs_dir


@app.command("runs")
@friendly
def runs_command(folder: str | None = typer.Argument(None, metavar="[RUNS_DIR]",
                                                       help="the runs folder (as --runs-dir)"),
                 runs_dir: str | None = runs_dir_option("the runs folder (default: $RAGMETER_RUNS_DIR, else runs)"),
                 ) -> None:
    """List runs with their status and headline means (a run whose files cannot be read is
    listed as damaged, with the file and line). The folder is given as --runs-dir, as every
    command takes it, or as the argument."""
    from ragmeter.report.terminal import runs_table
    from ragmeter.runs import list_runs

    if folder is not None and runs_dir is not None and folder != runs_dir:
        raise typer.BadParameter(f"two runs folders given: {folder} and --runs-dir {runs_dir}; give one",
                                 param_hint="--runs-dir")
    typer.echo(runs_table(list_runs(runs_dir or folder or default_runs_dir(), damaged=True)))


@app.command("show")
@friendly
def show_command(run: str = typer.Argument(..., help=RUN_HELP), runs_dir: str | None = runs_dir_option(),
                 fmt: str = format_option("table", "otlp", what="otlp: the scores as OpenTelemetry evaluation "
                                                                "events (OTLP/JSON)")) -> None:
    """Print a run's setup and summary: means, 95% intervals and coverage."""
    from ragmeter.report.terminal import show_run
    from ragmeter.runs import load_run

    loaded = load_run(run, runs_dir)
    if fmt == "otlp":
        from ragmeter.report.otlp_events import evaluation_events

        typer.echo(json.dumps(evaluation_events(loaded.samples(), loaded.results)))
        return
    typer.echo(show_run(loaded))


@app.command("report")
@friendly
def report_command(run: str = typer.Argument(..., help=RUN_HELP),
                   html_path: str = typer.Option(..., "--html", help="where to write the HTML report"),
                   runs_dir: str | None = runs_dir_option()) -> None:
    """Write a self-contained HTML report of a run (no CDN, no network, works from file://)."""
    from ragmeter.report.html import write_html
    from ragmeter.runs import load_run

    write_html(load_run(run, runs_dir), html_path)
    typer.echo(f"report written: {html_path}")


@app.command("diagnose")
@friendly
def diagnose_command(run: str = typer.Argument(..., help=RUN_HELP),
                     fmt: str = format_option("table", "json"), runs_dir: str | None = runs_dir_option()) -> None:
    """Label each query with the failure points its scores show, with the evidence."""
    from ragmeter.analysis.diagnosis import count_labels, diagnose
    from ragmeter.report.terminal import diagnosis_text
    from ragmeter.runs import load_run

    r = load_run(run, runs_dir)
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
        if spec.origin:  # a metric of one's own (ragmeter.metrics.custom): who defined it
            typer.echo(f"    from: {spec.origin}")
