"""Writing samples back in the dataset format (a run keeps a copy of what it scored), and every
file ragmeter writes, atomically (a temporary file, fsync, then a rename)."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragmeter.core.errors import StorageError, os_error_fix
from ragmeter.core.history import TurnHistory, plain
from ragmeter.core.sample import Sample


def sample_to_row(s: Sample, *, history: Callable[[TurnHistory], Any] = plain) -> dict:
    """The JSONL record that ``load_dataset`` reads back into an equal sample. ``history``: how a
    conversation turn's :class:`~ragmeter.core.history.TurnHistory` is written (default: the
    text; the run store writes each line of a conversation once)."""
    row: dict = {"id": s.id}
    if s.question is not None:
        row["question"] = s.question
    row["retrieved"] = [{k: v for k, v in (("id", c.id), ("score", c.score), ("text", c.text)) if v is not None}
                        for c in s.retrieved]
    row["relevant"] = dict(s.relevance)
    for name in ("answer", "reference"):
        if getattr(s, name) is not None:
            row[name] = getattr(s, name)
    if s.context is not None:
        row["context"] = list(s.context)
    row["answerable"] = s.answerable
    if s.metadata:
        row["metadata"] = {k: history(v) if isinstance(v, TurnHistory) else v for k, v in s.metadata.items()}
    for name in ("reference_claims", "answer_claims"):
        if getattr(s, name) is not None:
            row[name] = list(getattr(s, name))
    if s.answer_context is not None:
        row["answer_context"] = [{k: v for k, v in (("id", c.id), ("score", c.score), ("text", c.text))
                                  if v is not None} for c in s.answer_context]
    return row


def _replace(tmp: Path, path: Path) -> None:
    """Move a finished temporary file into place (``rename`` is atomic on one file system)."""
    tmp.replace(path)


def write_text_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write to a temporary file in the same folder, fsync it, then rename it over ``path``:
    a crash leaves the old file or the new one, never half of one. The file gets the mode the
    umask gives a new file (``mkstemp``'s 0600 made an imported dataset unreadable to others)."""
    tmp = stage_text(path, text)
    try:
        _replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def stage_text(path: Path, text: str | Iterable[str]) -> Path:
    """Write ``text`` to a temporary file beside ``path`` (fsynced) and return it, ``path``
    untouched: the caller renames it into place (:func:`commit`) once everything it writes
    together is known to be good, or deletes it. On any error the temporary file is gone."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:  # the text's own line ends, on any OS
            for piece in [text] if isinstance(text, str) else text:
                f.write(piece)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def commit(staged: Iterable[tuple[Path, Path]]) -> None:
    """Rename staged temporary files over their targets: ``(temporary, target)`` pairs."""
    for tmp, path in staged:
        _replace(tmp, path)


def write_json(path: str | Path, doc: dict) -> None:
    """Write ``doc`` as indented JSON atomically: a crash never leaves half a file."""
    write_text_atomic(Path(path), json.dumps(doc, indent=2, ensure_ascii=False))


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> int:
    """Write one JSON object per line atomically; returns the rows written."""
    count = 0

    def lines() -> Iterator[str]:
        nonlocal count
        for row in rows:
            count += 1
            yield json.dumps(row, ensure_ascii=False) + "\n"

    write_text_atomic(Path(path), lines())
    return count


def write_lines(path: str | Path, lines: Iterable[str]) -> None:
    """Write lines of text (each without its newline) atomically."""
    write_text_atomic(Path(path), (line + "\n" for line in lines))


@contextmanager
def writing(path: str | Path, *, what: str, option: str) -> Iterator[None]:
    """Turn an OS error inside the block (a folder that cannot be created, a read-only or full
    disk) into one :class:`StorageError` naming the path, the option that chose it and the fix.

    >>> with writing("/proc/nope", what="output folder", option="--out"):
    ...     Path("/proc/nope").mkdir(parents=True, exist_ok=True)
    Traceback (most recent call last):
    ragmeter.core.errors.StorageError: /proc/nope: cannot create or write the output folder (No such file ...
    """
    try:
        yield
    except OSError as exc:
        raise StorageError(f"cannot create or write the {what} ({exc.strerror or exc})", file=str(path),
                           fix=os_error_fix(exc, option)) from None


def write_output(path: str | Path, text: str, *, what: str, option: str) -> None:
    """Write a file the user asked for (a report, a plot) atomically; a folder that is missing
    or read-only is a :class:`StorageError` naming the file and the option, not a traceback.

    >>> write_output("/no/such/folder/r.html", "x", what="report", option="--html")
    Traceback (most recent call last):
    ragmeter.core.errors.StorageError: /no/such/folder/r.html: cannot write the report (No such file ...
    """
    try:
        write_text_atomic(Path(path), text)
    except OSError as exc:
        raise StorageError(f"cannot write the {what} ({exc.strerror or exc})", file=str(path),
                           fix=f"give {option} a file in a folder that exists and can be written") from None
