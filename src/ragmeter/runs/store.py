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

Every file is written atomically (temporary file, then rename); the streaming engine appends
to samples.jsonl and results.jsonl, and a reader of a run that is not complete trims a torn
last line. Paths are stored absolute, with the dataset's fingerprint, so ``--resume`` works
from any folder and notices a changed dataset. Status: ``running``, ``complete``,
``interrupted`` (with ``stopped_by``: the error that stopped it; ``--resume`` finishes it), or
``failed`` (stopped by bad input after results were saved: not resumable, fix the data).
Label and embedding results are saved before any judged metric starts. A run whose files
cannot be read is listed as damaged (file and line); the commands that read it say where.
Secrets (URL userinfo, held API keys) are redacted from everything written here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragmeter._version import __version__
from ragmeter.core.errors import (
    InvalidInputError,
    RagmeterError,
    StorageError,
    os_error_fix,
)
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.result_columns import ResultColumns, columns_of
from ragmeter.core.sample import Sample
from ragmeter.core.secrets import redact, redact_value
from ragmeter.core.settings import DEFAULTS, default_runs_dir
from ragmeter.io.dataset import load_dataset
from ragmeter.io.writer import write_json, write_lines, writing
from ragmeter.metrics import resolve_key
from ragmeter.runs.lock import LOCK_NAME
from ragmeter.runs.result_lines import result_lines, sample_lines
from ragmeter.runs.result_reader import agrees, read_columns
from ragmeter.runs.run_check import check_row, check_whole, finite

#: The most characters of a run name kept in its directory's name (a file name holds 255 bytes)
NAME_CHARS = 80


def run_slug(name: str) -> str:
    """The part of a run directory's name that comes from ``--name``: letters, digits and ``_.-``,
    at most :data:`NAME_CHARS` of them (a longer name is cut and keeps a hash of the whole).

    >>> run_slug("nightly eval"), run_slug("../x"), run_slug("")
    ('nightly-eval', '..-x', 'eval')
    >>> len(run_slug("n" * 300)) == NAME_CHARS
    True
    """
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "eval"
    if len(slug) > NAME_CHARS:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        slug = f"{slug[:NAME_CHARS - 9]}-{digest}"
    return slug


def new_run_path(base: str | Path | None = None, name: str = DEFAULTS.name) -> Path:
    """A ``<base>/<UTC timestamp>-<name>`` not used yet (base: ``$RAGMETER_RUNS_DIR`` or
    ``runs``); :func:`create_run` claims one atomically."""
    base = default_runs_dir() if base is None else base
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    slug = run_slug(name)
    path = Path(base) / f"{stamp}-{slug}"
    n = 1
    while path.exists():
        n += 1
        path = Path(base) / f"{stamp}-{slug}-{n}"
    return path


RUNS_OPTIONS = "--runs-dir / --ledger"  # the options that choose where run files go


def _write_json(path: Path, doc: dict) -> None:
    with writing(path, what="run file", option=RUNS_OPTIONS):
        write_json(path, redact_value(doc))


def check_writable(base: str | Path) -> None:
    """Fail before any scoring when the runs folder cannot take a run directory."""
    base = Path(base)
    try:
        base.mkdir(parents=True, exist_ok=True)
        probe = base / f".ragmeter-write-check-{os.getpid()}"
        probe.write_bytes(b"x")
        probe.unlink()
    except OSError as exc:
        raise StorageError(f"the runs folder cannot be written ({exc.strerror or exc})", file=str(base),
                           fix=os_error_fix(exc)) from None


def _setup(options: dict[str, Any], dataset: dict[str, Any] | None) -> dict:
    setup = {"status": "running", "ragmeter_version": __version__, "started": time.time(), "options": options,
             "pid": os.getpid(), "host": socket.gethostname()}
    if dataset is not None:
        setup["dataset"] = dataset
    return redact_value(setup)


def create_run(base: str | Path, name: str, options: dict[str, Any],
               dataset: dict[str, Any] | None = None) -> tuple[Path, dict]:
    """A new run directory ``<base>/<timestamp>-<name>[-n]`` with its setup marked running, and
    that setup. The name is claimed with ``mkdir`` (atomic: of several processes starting runs of
    one name in the same second, each gets its own directory), and the setup, written first
    under a temporary name, is renamed into it, so the directory never holds a partial setup."""
    base = Path(base)
    setup = _setup(options, dataset)
    tmp = base / f".ragmeter-new-{os.getpid()}-{secrets.token_hex(4)}.tmp"
    with writing(base, what="run directory", option=RUNS_OPTIONS):
        base.mkdir(parents=True, exist_ok=True)
    _write_json(tmp, setup)
    try:
        for _ in range(1000):
            path = new_run_path(base, name)
            try:
                path.mkdir()
            except FileExistsError:  # another process claimed it between the look and the mkdir
                continue
            except OSError as exc:
                raise StorageError(f"the run directory cannot be made ({exc.strerror or exc})", file=str(path),
                                   fix=os_error_fix(exc)) from None
            with writing(path, what="run directory", option=RUNS_OPTIONS):
                os.replace(tmp, path / "setup.json")
            return path, setup
        raise StorageError("no free run directory name after 1000 tries", file=str(base),
                           fix="give another --name or remove old runs")
    finally:
        tmp.unlink(missing_ok=True)


def start_run(path: Path, options: dict[str, Any], dataset: dict[str, Any] | None = None) -> dict:
    """Create the directory ``path`` (or take the run already there) with a setup marked running
    (what --resume needs is in ``options``; ``dataset``: its absolute path and fingerprint,
    checked on resume). The directory appears with its setup.json in it (made under a
    temporary name, then renamed), so a kill never leaves a run directory that is not a run.
    A new run under ``--runs-dir`` is made by :func:`create_run`, which also picks a free name."""
    setup = _setup(options, dataset)
    if path.is_dir() and (path / "setup.json").is_file():
        _write_json(path / "setup.json", setup)
        return setup
    tmp = path.with_name(f".{path.name[:100]}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    with writing(path, what="run directory", option=RUNS_OPTIONS):
        tmp.mkdir(parents=True, exist_ok=True)
    _write_json(tmp / "setup.json", setup)
    with writing(path, what="run directory", option=RUNS_OPTIONS):
        tmp.rename(path)
    return setup


def reopen_run(path: Path, setup: dict) -> dict:
    """Mark a run being resumed as running again, by this process (so that ``ragmeter runs``
    tells a resumed run from one interrupted again)."""
    setup = {**setup, "status": "running", "pid": os.getpid(), "host": socket.gethostname()}
    _write_json(path / "setup.json", setup)
    return setup


def _write_result(path: Path, result: EvaluationResult) -> dict:
    with writing(path / "samples.jsonl", what="run file", option=RUNS_OPTIONS):
        write_lines(path / "samples.jsonl", sample_lines(result.samples))  # sample_to_row's JSON, redacted
    doc = result.to_dict(samples=False)
    with writing(path / "results.jsonl", what="run file", option=RUNS_OPTIONS):
        write_lines(path / "results.jsonl", result_lines(result))  # to_dict()'s rows, redacted
    summary = {name: {k: v for k, v in m.items() if k != "provenance"} for name, m in doc["metrics"].items()}
    _write_json(path / "summary.json", summary)
    return doc


def save_partial(path: Path, setup: dict, result: EvaluationResult) -> dict:
    """Save what is scored so far (the label and embedding metrics) while the run goes on:
    the run stays ``running`` and lists them in ``saved``."""
    doc = _write_result(path, result)
    setup = {**setup, "saved": list(doc["metrics"]), "dataset": {**setup.get("dataset", {}), **doc["dataset"]},
             "metrics": {name: m["provenance"] for name, m in doc["metrics"].items()}}
    _write_json(path / "setup.json", setup)
    return setup


def finish_run(path: Path, setup: dict, result: EvaluationResult) -> dict:
    doc = _write_result(path, result)
    setup = {k: v for k, v in setup.items() if k not in ("saved", "stopped_by")}
    setup = {**setup, "status": "complete", "finished": time.time(), "ragmeter_version": __version__,
             "dataset": {**setup.get("dataset", {}), **doc["dataset"]},
             "metrics": {name: m["provenance"] for name, m in doc["metrics"].items()},
             "judge": doc.get("judge")}
    _write_json(path / "setup.json", setup)
    return setup


def mark_stopped(path: Path, setup: dict, error: BaseException, *, extra: dict | None = None) -> str:
    """Record that the run stopped before it completed, so it is never left ``running``; returns
    the status written. Bad input (an ``InvalidInputError``: a fact with a blank entity, a
    chunk with no text) cannot be resumed away (the data must change, and a resume refuses a
    changed dataset): a run directory that holds nothing but its setup is removed (bad input
    leaves no run behind, as when it is refused before the run starts: ``discarded``), one that
    holds results is ``failed``, never offered to resume. Anything else is ``interrupted``, with
    the error, and ``--resume`` finishes it. Best effort: a failure to write is not allowed to
    hide ``error``. ``extra``: more to record (what the judge spent)."""
    reason = "interrupted (Ctrl-C)" if isinstance(error, KeyboardInterrupt) else f"{type(error).__name__}: {error}"
    status = "failed" if isinstance(error, InvalidInputError) else "interrupted"
    if status == "failed" and _discard(path):
        return "discarded"
    try:
        current = json.loads((path / "setup.json").read_text(encoding="utf-8"))
        if not isinstance(current, dict) or current.get("status") == "complete":
            current = setup
    except (OSError, ValueError, RecursionError):
        current = setup
    doc = {**current, **(extra or {}), "status": status, "stopped_by": redact(reason[:2000]), "stopped": time.time()}
    try:
        _write_json(path / "setup.json", doc)
    except RagmeterError:  # a full disk has no room for the temporary copy: rewrite the file in place
        _rewrite_in_place(path / "setup.json", doc)
    return status


def _rewrite_in_place(path: Path, doc: dict) -> None:
    """Overwrite ``path`` with ``doc`` in its own blocks (best effort, for a full disk: a run left
    ``running`` by a process that is gone reads as interrupted all the same)."""
    try:
        data = json.dumps(redact_value(doc), indent=2, ensure_ascii=False).encode("utf-8")
        with open(path, "r+b") as f:
            f.write(data)
            f.truncate()
    except OSError:
        pass


def _discard(path: Path) -> bool:
    """Remove a run directory that holds only its setup.json (nothing scored); False otherwise."""
    try:
        if {p.name for p in path.iterdir()} - {"setup.json", LOCK_NAME}:
            return False
        (path / "setup.json").unlink(missing_ok=True)
        (path / LOCK_NAME).unlink(missing_ok=True)
        path.rmdir()
    except OSError:
        return False
    return True


@dataclass
class Run:
    """A run as read: its setup, its rows of ``results.jsonl`` (read from the file when iterated,
    see :class:`ragmeter.runs.result_reader.RunRows`, or a list), its summary, and the rows in
    columns (built from the rows when not given)."""

    path: Path
    setup: dict
    results: Sequence[dict]
    summary: dict
    columns: ResultColumns | None = None

    def __post_init__(self) -> None:
        if self.columns is None:
            self.columns = columns_of(self)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def complete(self) -> bool:
        return self.setup.get("status") == "complete"

    @property
    def status(self) -> str:
        """``complete``, ``running``, ``interrupted`` or ``failed``: a run still marked running whose process
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
        return columns_of(self).values(self.key(metric))

    def outcomes(self, metric: str) -> dict[str, dict]:
        """sample id -> the stored cell: status, value, reason or error."""
        key = self.key(metric)
        return {r["id"]: r["metrics"][key] for r in self.results if key in r["metrics"]}

    def samples(self) -> Sequence[Sample]:
        """The samples as they were scored (the run's own copy). A run that is not complete may
        end in a torn line (killed mid-append): the samples before it are read."""
        path = self.path / "samples.jsonl"
        if not self.complete and path.is_file():
            text = path.read_bytes()
            if text and not text.endswith(b"\n"):
                import tempfile

                with tempfile.TemporaryDirectory() as tmp:
                    trimmed = Path(tmp) / "samples.jsonl"
                    trimmed.write_bytes(text[: text.rfind(b"\n") + 1])
                    return load_dataset(trimmed).samples
        return load_dataset(path).samples


def _located(path: Path, line: int | None, problem: str) -> InvalidInputError:
    return InvalidInputError(f"the run file is damaged: {problem}", file=str(path), line=line,
                             fix="rerun it (`ragmeter eval --resume` on a run that did not complete), or delete "
                                 "the run directory")


def _read_json(path: Path, what: str) -> dict:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise _located(path, exc.lineno, f"not valid JSON ({exc.msg}, column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # not UTF-8, nested too deep
        raise _located(path, None, f"cannot be read ({type(exc).__name__})") from None
    except OSError as exc:
        raise InvalidInputError(f"cannot read the run file ({exc.strerror or exc})", file=str(path)) from None
    if not isinstance(doc, dict):
        raise _located(path, 1, f"{what} must be a JSON object, got {type(doc).__name__}")
    return doc


def _read_results(path: Path, complete: bool) -> list[dict]:
    """results.jsonl, each row checked; a run that is not complete may end in a torn line
    (killed mid-append), which is dropped."""
    try:
        text = path.read_text(encoding="utf-8")
    except ValueError:
        raise _located(path, None, "not UTF-8 text") from None
    except OSError as exc:
        raise InvalidInputError(f"cannot read the run file ({exc.strerror or exc})", file=str(path)) from None
    lines = text.split("\n")
    if not complete and lines and lines[-1].strip():
        lines = lines[:-1]  # no newline yet: the last line was being written
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _located(path, number, f"not valid JSON ({exc.msg}, column {exc.colno})") from None
        except RecursionError:
            raise _located(path, number, "JSON nested too deep") from None
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not isinstance(row.get("metrics"), dict) \
                or not all(isinstance(c, dict) and isinstance(c.get("status"), str) for c in row["metrics"].values()):
            raise _located(path, number, 'each line must be {"id": str, "metrics": {name: {"status": ...}}}')
        check_row(path, number, row)  # a finite value where scored, none elsewhere
        rows.append(row)
    return rows


def _count(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _number(x: Any) -> bool:
    return finite(x)  # NaN and infinity are no mean, no interval, no time


def _check_summary(path: Path, summary: dict) -> None:
    for name, m in summary.items():
        if not isinstance(m, dict) or not all(_count(m.get(k)) for k in ("scored", "not_computed", "failed")) \
                or not (m.get("mean") is None or _number(m.get("mean"))):
            raise _located(path, None, f'metric "{name}" must have a finite numeric mean (or null) and counts')
        ci = m.get("ci95")
        if ci is not None and not (isinstance(ci, list) and len(ci) == 2 and all(map(_number, ci))):
            raise _located(path, None, f'metric "{name}": "ci95" must be null or [low, high]')


def _check_setup(path: Path, setup: dict) -> None:
    problems = []
    if not isinstance(setup.get("options", {}), dict):
        problems.append('"options" must be an object')
    if not isinstance(setup.get("status", ""), str):
        problems.append('"status" must be a string')
    for name in ("started", "finished"):
        if name in setup and not _number(setup[name]):
            problems.append(f'"{name}" must be a time in seconds')
    for name in ("dataset", "metrics"):
        if name in setup and not isinstance(setup[name], dict):
            problems.append(f'"{name}" must be an object')
    judge = setup.get("judge")
    if judge is not None and not (isinstance(judge, dict) and all(
            _count(judge.get(k)) for k in ("calls", "cached", "input_tokens", "output_tokens"))):
        problems.append('"judge" must be null or an object with calls, cached and token counts')
    if problems:
        raise _located(path, None, "; ".join(problems))


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


def load_run(path: str | Path, runs_dir: str | Path | None = None) -> Run:
    """A run directory (or a run's name, looked up under ``runs_dir``: see :func:`resolve_run_path`),
    every file checked: a damaged one is an ``InvalidInputError`` naming the file and line (never a
    JSONDecodeError)."""
    path = resolve_run_path(path, runs_dir)
    setup_file = path / "setup.json"
    if not setup_file.is_file():
        raise InvalidInputError("not a ragmeter run directory or run name (no setup.json)", file=str(path),
                                fix=f"give a directory that `ragmeter eval` wrote (runs/<timestamp>-<name>) or a "
                                    f"name that `ragmeter runs` lists under {runs_dir or default_runs_dir()}")
    setup = _read_json(setup_file, "setup.json")
    _check_setup(setup_file, setup)
    complete = setup.get("status") == "complete"
    results: Sequence[dict] = []
    summary: dict = {}
    read = None
    if (path / "results.jsonl").is_file():
        read = read_columns(path / "results.jsonl", complete=complete)  # None: the rows name what is wrong
        if read is None:
            results = _read_results(path / "results.jsonl", complete)
    if (path / "summary.json").is_file():
        summary = _read_json(path / "summary.json", "summary.json")
        _check_summary(path / "summary.json", summary)
    if read is not None:
        columns, rows = read
        if not complete or (path / "summary.json").is_file() and agrees(columns, summary):
            return Run(path, setup, rows, summary, columns)
        results = list(rows)  # for check_whole to say what disagrees
    check_whole(path, results, summary, complete=complete)  # a complete run's files agree with each other
    return Run(path, setup, results, summary)


def damaged_run(path: Path, error: InvalidInputError) -> Run:
    """A placeholder for a run that cannot be read: status ``damaged``, the error kept."""
    where = ", ".join([Path(error.file).name] + ([f"line {error.line}"] if error.line else [])) if error.file else ""
    return Run(path, {"status": "damaged", "damage": f"{where}: {error.problem}" if where else str(error)}, [], {})


def list_runs(base: str | Path | None = None, *, damaged: bool = False) -> list[Run]:
    """The runs under ``base`` (``$RAGMETER_RUNS_DIR`` or ``runs``), oldest first. A run that
    cannot be read is left out, or with ``damaged=True`` listed with status ``damaged``."""
    base = Path(default_runs_dir() if base is None else base)
    out: list[Run] = []
    runs = (sorted(p for p in base.iterdir() if not p.name.startswith(".") and (p / "setup.json").is_file())
            if base.is_dir() else [])
    for p in runs:
        try:
            out.append(load_run(p))
        except InvalidInputError as exc:
            if damaged:
                out.append(damaged_run(p, exc))
    return out
