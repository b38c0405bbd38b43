"""Hand a run to MLflow: its setup as params, its means and intervals as metrics, the HTML
report and the run's files as artifacts.

``ragmeter mlflow-log RUN`` logs a run directory; ``result.log_to_mlflow()`` logs an
in-memory result (written to a temporary run directory first, so both log the same files).
MLflow is imported only here (``pip install 'ragmeter[mlflow]'``: mlflow-skinny, the client
without the server). Where it logs is MLflow's to decide (``MLFLOW_TRACKING_URI``, or
``tracking_uri=``); nothing else is contacted. MLflow's own usage telemetry is turned off
(``MLFLOW_DISABLE_TELEMETRY=true``) unless the environment already says otherwise.

Every wait on a tracking server is bounded: for the call only, MLflow's HTTP settings are
given ragmeter's bounds (``MLFLOW_HTTP_REQUEST_TIMEOUT`` 10 s, ``MLFLOW_HTTP_REQUEST_MAX_RETRIES``
2, ``MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR`` 1; MLflow's own are 120 s and 7 retries with a
doubling back-off: minutes of silence for a server that is down) unless the environment sets
them; ``say`` is told what is waited for, and a server that never answers is one clear error.

MLflow keys allow letters, digits and ``_ - . / space``: a measure's canonical name is
written with ``@`` as ``_at`` and any other character as ``_`` (``ndcg(discount='jk2002')@5``
-> ``ndcg_discount_jk2002_at5``); ``names.json`` among the artifacts maps each key back.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from ragmeter.core.errors import RagmeterError
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.privacy import telemetry_off
from ragmeter.core.secrets import redact
from ragmeter.io.writer import write_json
from ragmeter.report.html import write_html
from ragmeter.runs.store import Run, finish_run, load_run, start_run

RUN_FILES = ("setup.json", "summary.json", "results.jsonl", "samples.jsonl")


class MlflowUnavailableError(RagmeterError, ImportError):
    """MLflow is not installed."""


class MlflowRefusedError(RagmeterError):
    """MLflow refused to log (a tracking URI it cannot use, a file store it no longer writes
    without ``MLFLOW_ALLOW_FILE_STORE``, a server that answers with an error)."""


def metric_key(name: str) -> str:
    """A measure's name as an MLflow key.

    >>> metric_key("ndcg(discount='jk2002')@5"), metric_key("recall@5"), metric_key("faithfulness")
    ('ndcg_discount_jk2002_at5', 'recall_at5', 'faithfulness')
    """
    key = re.sub(r"[^A-Za-z0-9_.\-/ ]+", "_", name.replace("@", "_at"))
    return re.sub(r"_+", "_", key).strip("_") or "metric"


def run_params(run: Run) -> dict[str, str]:
    """The setup that decides the numbers: the stored options, the dataset's fingerprints,
    ragmeter's version, each metric's version, and the judge (backend and model)."""
    setup = run.setup
    params: dict[str, str] = {}
    for name, value in sorted((setup.get("options") or {}).items()):
        if value is not None:
            params[name] = value if isinstance(value, str) else json.dumps(value)
    dataset = setup.get("dataset") or {}
    for field in ("path", "fingerprint", "testset_fingerprint"):
        if dataset.get(field):
            params[f"dataset_{field}"] = str(dataset[field])
    params["ragmeter_version"] = str(setup.get("ragmeter_version"))
    for name, prov in (setup.get("metrics") or {}).items():
        if not prov:
            continue
        params[f"version.{metric_key(name)}"] = str(prov.get("metric_version"))
        judge = prov.get("judge")
        if judge and "judge" not in params:
            params["judge"] = f"{judge.get('backend')}:{judge.get('model')}"
    return params


def run_metrics(run: Run) -> dict[str, float]:
    """Per measure: ``<key>`` (the mean over scored samples), ``<key>.ci95_low`` / ``.ci95_high``,
    ``<key>.scored`` / ``.not_computed`` / ``.failed`` and ``<key>.coverage`` (scored / all).
    A measure nothing was scored for has no mean (MLflow has no "not computed")."""
    out: dict[str, float] = {}
    for name, s in run.summary.items():
        key = metric_key(name)
        if s.get("mean") is not None:
            out[key] = float(s["mean"])
        if s.get("ci95"):
            out[f"{key}.ci95_low"], out[f"{key}.ci95_high"] = map(float, s["ci95"])
        total = s["scored"] + s["not_computed"] + s["failed"]
        for part in ("scored", "not_computed", "failed"):
            out[f"{key}.{part}"] = float(s[part])
        if total:
            out[f"{key}.coverage"] = s["scored"] / total
    return out


#: MLflow's HTTP settings for the call (the environment's own win): (variable, value).
HTTP_BOUNDS = (("MLFLOW_HTTP_REQUEST_TIMEOUT", 10), ("MLFLOW_HTTP_REQUEST_MAX_RETRIES", 2),
               ("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", 1))


@contextmanager
def bounded_http(timeout_s: int | None = None, retries: int | None = None) -> Iterator[tuple[int, int]]:
    """MLflow's HTTP timeout, retries and back-off set for the call only (restored after); a
    variable the environment already sets is left as it is. Yields (timeout, retries) in force."""
    given = {"MLFLOW_HTTP_REQUEST_TIMEOUT": timeout_s, "MLFLOW_HTTP_REQUEST_MAX_RETRIES": retries}
    saved = {name: os.environ.get(name) for name, _ in HTTP_BOUNDS}
    try:
        for name, default in HTTP_BOUNDS:
            if saved[name] is None or given.get(name) is not None:
                os.environ[name] = str(given.get(name) if given.get(name) is not None else default)
        yield _int_env("MLFLOW_HTTP_REQUEST_TIMEOUT", 120), _int_env("MLFLOW_HTTP_REQUEST_MAX_RETRIES", 7)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _int_env(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def _mlflow() -> Any:
    telemetry_off("mlflow")
    try:
        import mlflow
    except ImportError:
        raise MlflowUnavailableError("logging to MLflow needs it: pip install 'ragmeter[mlflow]'") from None
    return mlflow


def log_run(run: Run | str | Path, *, tracking_uri: str | None = None, experiment: str | None = None,
            run_name: str | None = None, say: Callable[[str], None] | None = None,
            timeout_s: int | None = None, retries: int | None = None) -> str:
    """Log a run directory to MLflow and return the MLflow run id. Inside an active MLflow
    run (``with mlflow.start_run():``) it logs there; otherwise it starts and ends its own,
    named after the run directory. ``say`` is told which server is waited for and how long,
    and that a run not complete (running, interrupted) is logged with what it scored so far;
    ``timeout_s`` / ``retries`` bound each HTTP request (see :func:`bounded_http`)."""
    run = run if isinstance(run, Run) else load_run(run)
    if run.status != "complete" and say is not None:  # partial figures are logged, never silently
        say(f"the run {run.name} is {run.status}, not complete: its figures cover what was scored so far "
            f"(tagged ragmeter.status={run.status}); finish it with `ragmeter eval --resume {run.path}` and log "
            f"it again")
    mlflow = _mlflow()
    from mlflow.exceptions import MlflowException

    with bounded_http(timeout_s, retries) as (timeout, tries):
        if tracking_uri is not None:
            mlflow.set_tracking_uri(tracking_uri)
        uri = redact(str(mlflow.get_tracking_uri()))
        remote = uri.lower().startswith(("http://", "https://"))
        if remote and say is not None:
            say(f"waiting for the MLflow tracking server at {uri} (each request up to {timeout} s, {tries} "
                f"retries; MLFLOW_HTTP_REQUEST_TIMEOUT and MLFLOW_HTTP_REQUEST_MAX_RETRIES change this)")
        try:
            return _log(mlflow, run, experiment=experiment, run_name=run_name)
        except MlflowException as exc:  # its text spans lines: said on one
            said = redact(" ".join(str(exc).split()))
            if remote and _unreachable(said):
                raise MlflowRefusedError(f"no MLflow tracking server answered at {uri} ({said[:400]}). Fix: start "
                                         f"the server, or point --tracking-uri (or MLFLOW_TRACKING_URI) at one that "
                                         f"runs") from None
            raise MlflowRefusedError(f"MLflow refused to log {run.name} ({type(exc).__name__}: {said[:800]}). "
                                     "Fix: point --tracking-uri (or MLFLOW_TRACKING_URI) at an MLflow server, "
                                     "http://HOST:PORT, or at a folder, file:./mlruns, with "
                                     "MLFLOW_ALLOW_FILE_STORE=true (MLflow 3)") from None


def _unreachable(said: str) -> bool:
    low = said.lower()
    return any(w in low for w in ("max retries exceeded", "connection refused", "timed out", "read timeout",
                                  "connecttimeout", "failed to establish", "name or service not known",
                                  "connection aborted", "remotedisconnected"))


def _log(mlflow: Any, run: Run, *, experiment: str | None, run_name: str | None) -> str:
    if experiment is not None:
        mlflow.set_experiment(experiment)
    active = mlflow.active_run()
    with nullcontext(active) if active is not None else mlflow.start_run(run_name=run_name or run.name) as mlrun:
        mlflow.log_params(run_params(run))
        mlflow.log_metrics(run_metrics(run))
        mlflow.set_tags({"ragmeter.run": run.name, "ragmeter.status": run.status})
        with tempfile.TemporaryDirectory(prefix="ragmeter-mlflow-") as tmp:
            report = Path(tmp) / "report.html"
            write_html(run, str(report))
            names = Path(tmp) / "names.json"
            write_json(names, {metric_key(n): n for n in run.summary})
            mlflow.log_artifact(str(report))
            mlflow.log_artifact(str(names), artifact_path="ragmeter")
            for name in RUN_FILES:
                if (run.path / name).is_file():
                    mlflow.log_artifact(str(run.path / name), artifact_path="ragmeter")
        return str(mlrun.info.run_id)


def log_result(result: EvaluationResult, *, tracking_uri: str | None = None, experiment: str | None = None,
               run_name: str | None = None, options: dict[str, Any] | None = None) -> str:
    """Log an in-memory result: written as a run directory in a temporary folder, then
    :func:`log_run`. ``options``: the setup to record as params (default: the metrics and
    the dataset path)."""
    setup_options = options if options is not None else {"metrics": result.metric_names,
                                                         "dataset": result.dataset_path}
    with tempfile.TemporaryDirectory(prefix="ragmeter-run-") as tmp:
        path = Path(tmp) / (run_name or "evaluation")
        finish_run(path, start_run(path, setup_options), result)
        return log_run(load_run(path), tracking_uri=tracking_uri, experiment=experiment, run_name=run_name)
