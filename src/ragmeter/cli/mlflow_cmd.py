"""``ragmeter mlflow-log RUN``: hand a run directory to MLflow."""

from __future__ import annotations

import typer

from ragmeter.cli.app import app, echo_err, friendly


# The help is rich markup: "\\[" keeps "[mlflow]" from being read as a tag and dropped.
@app.command("mlflow-log")
@friendly
def mlflow_log_command(
    run: str = typer.Argument(..., help="a run directory"),
    tracking_uri: str | None = typer.Option(None, "--tracking-uri",
                                               help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI)"),
    experiment: str | None = typer.Option(None, "--experiment", help="MLflow experiment name"),
    run_name: str | None = typer.Option(None, "--run-name", help="MLflow run name (default: the directory's)"),
) -> None:
    r"""Log a run to MLflow: setup as params, means and 95% intervals as metrics, the HTML
    report and the run's files as artifacts (pip install 'ragmeter\[mlflow]')."""
    from ragmeter.runs.mlflow_log import log_run

    run_id = log_run(run, tracking_uri=tracking_uri, experiment=experiment, run_name=run_name, say=echo_err)
    typer.echo(f"logged to MLflow run {run_id}")
