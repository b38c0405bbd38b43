"""``mlflow-log`` to a tracking server that never answers (a socket that accepts and says
nothing) or refuses the connection: it says what it waits for, waits a bounded time (MLflow's
HTTP timeout and retries set for the call only: 120 s and 7 retries by default), then gives one
clear error; the environment is as it was after the call, and a user's own setting wins."""

from __future__ import annotations

import os
import socket

import pytest

from ragmeter import evaluate, load_dataset
from ragmeter.runs.mlflow_log import HTTP_BOUNDS, MlflowRefusedError, bounded_http, log_run

from ..conftest import WARRANTY
from ..installed import need

mlflow = need("mlflow", "pip install 'ragmeter[mlflow]'")


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
