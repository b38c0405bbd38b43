"""Issue 18: ``ragmeter mlflow-log RUN`` and ``result.log_to_mlflow()`` against a local MLflow
file store: setup as params, means and intervals as metrics, the HTML report and the run's
files as artifacts."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from ragmeter import evaluate, load_dataset
from ragmeter.runs.mlflow_log import HTTP_BOUNDS, MlflowRefusedError, bounded_http, log_run

from ..conftest import WARRANTY
from ..installed import need

mlflow = need("mlflow", "pip install 'ragmeter[mlflow]'")


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A local file store (MLflow 3 wants MLFLOW_ALLOW_FILE_STORE for one); telemetry unset,
    so the test sees ragmeter turn it off."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.delenv("MLFLOW_DISABLE_TELEMETRY", raising=False)
    for name in ("MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME"):
        monkeypatch.delenv(name, raising=False)
    uri = (tmp_path / "mlruns").as_uri()
    # MLflow keeps the tracking URI and the experiment per process: each test starts clean
    monkeypatch.setattr(mlflow.tracking.fluent, "_active_experiment_id", None, raising=False)
    previous = mlflow.get_tracking_uri()
    yield uri
    if mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(previous)
    os.environ.pop("MLFLOW_EXPERIMENT_ID", None)  # mlflow.set_experiment leaves it set


def read(uri: str, run_id: str):
    client = mlflow.tracking.MlflowClient(uri)
    run = client.get_run(run_id)
    top = {f.path for f in client.list_artifacts(run_id)}
    inner = {f.path for f in client.list_artifacts(run_id, "ragmeter")}
    return run.data, top | inner, client


def test_cli_logs_a_run_directory(cli, runs_dir, store, tmp_path):
    assert cli("eval", WARRANTY / "dataset.jsonl", "--name", "warranty").exit_code == 0
    (run_dir,) = runs_dir.iterdir()
    out = cli("mlflow-log", run_dir, "--tracking-uri", store, "--experiment", "rag", "--run-name", "nightly")
    assert out.exit_code == 0, out.output
    run_id = out.stdout.strip().rsplit(" ", 1)[-1]
    data, artifacts, client = read(store, run_id)
    summary = json.loads((run_dir / "summary.json").read_text())
    # means and intervals, exactly as the run recorded them (the seed's Step 1 means)
    assert data.metrics["precision_at5"] == summary["precision@5"]["mean"] == pytest.approx(0.3)
    assert data.metrics["reciprocal_rank_at5"] == pytest.approx(0.617, abs=5e-4)
    assert [data.metrics["ndcg_at5.ci95_low"], data.metrics["ndcg_at5.ci95_high"]] == summary["ndcg@5"]["ci95"]
    assert data.metrics["recall_at5.coverage"] == 1.0 and data.metrics["recall_at5.scored"] == 6
    # the setup as params
    assert data.params["k"] == "5" and data.params["dataset_fingerprint"] == load_dataset(
        WARRANTY / "dataset.jsonl").fingerprint
    assert data.params["version.ndcg_at5"] == str(json.loads((run_dir / "setup.json").read_text())[
        "metrics"]["ndcg@5"]["metric_version"])
    assert data.tags["mlflow.runName"] == "nightly" and data.tags["ragmeter.run"] == run_dir.name
    assert client.get_experiment(client.get_run(run_id).info.experiment_id).name == "rag"
    # the report and the run's files
    assert {"report.html", "ragmeter/results.jsonl", "ragmeter/summary.json", "ragmeter/setup.json",
            "ragmeter/samples.jsonl", "ragmeter/names.json"} <= artifacts
    page = Path(client.download_artifacts(run_id, "report.html", str(tmp_path))).read_text()
    assert page.startswith("<!DOCTYPE html>") and "ragmeter report" in page
    names = json.loads(Path(client.download_artifacts(run_id, "ragmeter/names.json", str(tmp_path))).read_text())
    assert names["precision_at5"] == "precision@5"
    assert os.environ["MLFLOW_DISABLE_TELEMETRY"] == "true"


def test_a_judged_result_logs_itself(store, seed_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", seed_server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-logged")
    monkeypatch.setenv("RAGMETER_RUNS_DIR", str(tmp_path / "runs"))
    q1 = [s for s in load_dataset(WARRANTY / "dataset.jsonl", corpus=WARRANTY / "corpus.jsonl") if s.id == "q1"]
    result = evaluate(q1, "faithfulness,ndcg(discount='jk2002')@5", judge="openai:judge-model")
    mlflow.set_tracking_uri(store)
    with mlflow.start_run(run_name="outer") as outer:  # an active run is logged into, not replaced
        run_id = result.log_to_mlflow()
    assert run_id == outer.info.run_id
    data, artifacts, client = read(store, run_id)
    assert data.metrics["faithfulness"] == pytest.approx(3 / 5)
    assert "ndcg_discount_jk2002_at5" in data.metrics
    assert data.params["judge"] == "openai:judge-model"
    assert "report.html" in artifacts
    everything = json.dumps({**data.params, **data.tags})
    for name in ("report.html", "ragmeter/setup.json", "ragmeter/results.jsonl"):
        everything += Path(client.download_artifacts(run_id, name, str(tmp_path))).read_text()
    assert "sk-never-logged" not in everything


def test_without_mlflow_it_says_what_to_install(cli, runs_dir, monkeypatch):
    assert cli("eval", WARRANTY / "dataset.jsonl").exit_code == 0
    (run_dir,) = runs_dir.iterdir()
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow -> ImportError
    out = cli("mlflow-log", run_dir)
    assert out.exit_code == 2 and "pip install 'ragmeter[mlflow]'" in out.output


def test_a_tracking_uri_mlflow_refuses_is_one_line_not_a_traceback(cli, runs_dir, store, monkeypatch):
    """MLflow's own exceptions (here an unsupported URI scheme) became a rich traceback of 150
    lines; they are one error line naming the run and the fix, exit status 2."""
    assert cli("eval", WARRANTY / "dataset.jsonl").exit_code == 0
    (run_dir,) = runs_dir.iterdir()
    from typer.testing import CliRunner

    from ragmeter.cli.main import app

    out = CliRunner().invoke(app, ["mlflow-log", str(run_dir), "--tracking-uri", "bogus://nowhere"])
    assert out.exit_code == 2, out.output
    (line,) = out.output.strip().splitlines()
    assert line.startswith(f"error: MLflow refused to log {run_dir.name} (") and "bogus://nowhere" in line
    assert line.endswith("Fix: point --tracking-uri (or MLFLOW_TRACKING_URI) at an MLflow server, "
                         "http://HOST:PORT, or at a folder, file:./mlruns, with MLFLOW_ALLOW_FILE_STORE=true "
                         "(MLflow 3)")


@pytest.fixture
def silent():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)  # connections are accepted by the kernel; nothing is ever read or answered
    yield f"http://127.0.0.1:{s.getsockname()[1]}"
    s.close()


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    for name, _ in HTTP_BOUNDS:
        monkeypatch.delenv(name, raising=False)
    previous = mlflow.get_tracking_uri()
    result = evaluate(load_dataset(WARRANTY / "dataset.jsonl"), ["precision@5"])
    path = tmp_path / "run"
    from ragmeter.runs.store import finish_run, start_run

    finish_run(path, start_run(path, {"metrics": ["precision@5"]}), result)
    yield path
    mlflow.set_tracking_uri(previous)


@pytest.mark.slow
def test_a_server_that_never_answers_is_a_bounded_wait_then_one_error(run_dir, silent):
    told: list[str] = []
    with pytest.raises(MlflowRefusedError, match=rf"no MLflow tracking server answered at {silent}"):
        log_run(run_dir, tracking_uri=silent, say=told.append, timeout_s=1, retries=0)
    assert told == [f"waiting for the MLflow tracking server at {silent} (each request up to 1 s, 0 retries; "
                    f"MLFLOW_HTTP_REQUEST_TIMEOUT and MLFLOW_HTTP_REQUEST_MAX_RETRIES change this)"]
    assert all(name not in os.environ for name, _ in HTTP_BOUNDS)  # set for the call only


def test_a_refused_connection_is_the_same_error(run_dir):
    with pytest.raises(MlflowRefusedError, match="no MLflow tracking server answered at http://127.0.0.1:9"):
        log_run(run_dir, tracking_uri="http://127.0.0.1:9", timeout_s=1, retries=0)


def test_the_bounds_are_the_defaults_and_the_environment_wins(monkeypatch):
    for name, _ in HTTP_BOUNDS:
        monkeypatch.delenv(name, raising=False)
    with bounded_http() as (timeout, retries):
        assert (timeout, retries) == (10, 2) and os.environ["MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR"] == "1"
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "45")
    with bounded_http() as (timeout, retries):
        assert (timeout, retries) == (45, 2)
    assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "45" and "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ


def test_a_run_not_complete_is_logged_with_a_word_and_its_status(cli, runs_dir, store):
    """The trial: mlflow-log logged a run still marked running without a word."""
    assert cli("eval", WARRANTY / "dataset.jsonl").exit_code == 0
    (run_dir,) = runs_dir.iterdir()
    setup = json.loads((run_dir / "setup.json").read_text())
    setup.update(status="interrupted")
    (run_dir / "setup.json").write_text(json.dumps(setup))
    out = cli("mlflow-log", run_dir, "--tracking-uri", store)
    assert out.exit_code == 0, out.output
    assert f"the run {run_dir.name} is interrupted, not complete" in out.stderr
    assert "ragmeter eval --resume" in out.stderr
    data, _, _ = read(store, out.stdout.strip().rsplit(" ", 1)[-1])
    assert data.tags["ragmeter.status"] == "interrupted"
