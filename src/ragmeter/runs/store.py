"""Run directories: a durable, self-describing record of one evaluation.

    runs/<UTC timestamp>-<name>/
        setup.json      what decides every number: ragmeter version, each metric's id,
                        version and variant, judge backend/model/decoding, prompt hashes,
                        k, view, dataset path and fingerprint, times, calls and tokens,
                        and status ("running" until the run completes)
        samples.jsonl   the samples as scored (a copy, so reports never depend on a file
                        that may change)
        results.jsonl   per sample and metric: status, value, reason or error
        summary.json    per metric: mean, 95% bootstrap interval, coverage
        ledger.sqlite   every judgment (unless --ledger points elsewhere)
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragmeter._version import __version__
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.sample import Sample
from ragmeter.core.settings import DEFAULTS, default_runs_dir
from ragmeter.io.dataset import load_dataset
from ragmeter.io.writer import sample_to_row, write_json, write_jsonl
from ragmeter.metrics import resolve_key


def new_run_path(base: str | Path | None = None, name: str = DEFAULTS.name) -> Path:
    """A new, unused ``<base>/<UTC timestamp>-<name>`` (base: ``$RAGMETER_RUNS_DIR`` or ``runs``)."""
    base = default_runs_dir() if base is None else base
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "eval"
    path = Path(base) / f"{stamp}-{slug}"
    n = 1
    while path.exists():
        n += 1
        path = Path(base) / f"{stamp}-{slug}-{n}"
    return path


def start_run(path: Path, options: dict[str, Any]) -> dict:
    """Create the directory and a setup marked running (what --resume needs is in ``options``)."""
    path.mkdir(parents=True, exist_ok=True)
    setup = {"status": "running", "ragmeter_version": __version__, "started": time.time(), "options": options,
             "pid": os.getpid(), "host": socket.gethostname()}
    write_json(path / "setup.json", setup)
    return setup


def reopen_run(path: Path, setup: dict) -> dict:
    """Mark a run being resumed as running again, by this process (so that ``ragmeter runs``
    tells a resumed run from one interrupted again)."""
    setup = {**setup, "status": "running", "pid": os.getpid(), "host": socket.gethostname()}
    write_json(path / "setup.json", setup)
    return setup


def finish_run(path: Path, setup: dict, result: EvaluationResult) -> dict:
    write_jsonl(path / "samples.jsonl", (sample_to_row(s) for s in result.samples))
    doc = result.to_dict()
    write_jsonl(path / "results.jsonl", doc["samples"])
    summary = {name: {k: v for k, v in m.items() if k != "provenance"} for name, m in doc["metrics"].items()}
    write_json(path / "summary.json", summary)
    setup = {**setup, "status": "complete", "finished": time.time(), "ragmeter_version": __version__,
             "dataset": doc["dataset"], "metrics": {name: m["provenance"] for name, m in doc["metrics"].items()},
             "judge": doc.get("judge")}
    write_json(path / "setup.json", setup)
    return setup


@dataclass
class Run:
    path: Path
    setup: dict
    results: list[dict]
    summary: dict

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def complete(self) -> bool:
        return self.setup.get("status") == "complete"

    @property
    def status(self) -> str:
        """``complete``, ``running`` or ``interrupted``: a run still marked running whose process
        is gone (same host, its pid no longer alive) was interrupted, and ``--resume`` finishes it."""
        status = str(self.setup.get("status", "?"))
        if status == "running" and not _alive(self.setup.get("pid"), self.setup.get("host")):
            return "interrupted"
        return status

    def key(self, metric: str) -> str:
        """The name this run records ``metric`` under: the name itself, or what it resolves to
        through the parser (``mrr`` -> ``reciprocal_rank@5`` when the run holds that one)."""
        names = self.summary or {name: None for r in self.results[:1] for name in r["metrics"]}
        return resolve_key(metric, names, holder=f"run {self.name}")

    def values(self, metric: str) -> dict[str, float | None]:
        """sample id -> value (None when not scored)."""
        key = self.key(metric)
        return {r["id"]: r["metrics"][key]["value"] for r in self.results if key in r["metrics"]}

    def outcomes(self, metric: str) -> dict[str, dict]:
        """sample id -> the stored cell: status, value, reason or error."""
        key = self.key(metric)
        return {r["id"]: r["metrics"][key] for r in self.results if key in r["metrics"]}

    def samples(self) -> tuple[Sample, ...]:
        """The samples as they were scored (the run's own copy)."""
        return load_dataset(self.path / "samples.jsonl").samples


def _alive(pid: Any, host: Any) -> bool:
    """Whether the process that wrote a run may still be running it. A run from another host, or
    from before runs recorded their pid, is taken as alive (nothing here can tell)."""
    if not isinstance(pid, int) or host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def resolve_run_path(path: str | Path, base: str | Path | None = None) -> Path:
    """A run directory, or a run's name as ``ragmeter runs`` lists it (looked up under ``base``:
    ``$RAGMETER_RUNS_DIR`` or ``runs``)."""
    given = Path(path)
    if (given / "setup.json").is_file():
        return given
    named = Path(default_runs_dir() if base is None else base) / given
    if not given.is_absolute() and (named / "setup.json").is_file():
        return named
    return given


def load_run(path: str | Path) -> Run:
    path = resolve_run_path(path)
    setup_file = path / "setup.json"
    if not setup_file.is_file():
        raise InvalidInputError("not a ragmeter run directory or run name (no setup.json)", file=str(path),
                                fix=f"give a directory that `ragmeter eval` wrote (runs/<timestamp>-<name>) or a "
                                    f"name that `ragmeter runs` lists under {default_runs_dir()}")
    setup = json.loads(setup_file.read_text())
    results, summary = [], {}
    if (path / "results.jsonl").is_file():
        results = [json.loads(line) for line in (path / "results.jsonl").read_text().splitlines() if line.strip()]
    if (path / "summary.json").is_file():
        summary = json.loads((path / "summary.json").read_text())
    return Run(path, setup, results, summary)


def list_runs(base: str | Path | None = None) -> list[Run]:
    """The runs under ``base`` (``$RAGMETER_RUNS_DIR`` or ``runs``), oldest first."""
    base = Path(default_runs_dir() if base is None else base)
    if not base.is_dir():
        return []
    return [load_run(p) for p in sorted(base.iterdir()) if (p / "setup.json").is_file()]

