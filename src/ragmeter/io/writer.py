"""Writing samples back in the dataset format (a run keeps a copy of what it scored), and JSON files."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from ragmeter.core.errors import StorageError
from ragmeter.core.sample import Sample


def sample_to_row(s: Sample) -> dict:
    """The JSONL record that ``load_dataset`` reads back into an equal sample."""
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
        row["metadata"] = dict(s.metadata)
    for name in ("reference_claims", "answer_claims"):
        if getattr(s, name) is not None:
            row[name] = list(getattr(s, name))
    return row


def _replace(tmp: Path, path: Path) -> None:
    """Move a finished temporary file into place (``rename`` is atomic on one file system)."""
    tmp.replace(path)


def write_json(path: str | Path, doc: dict) -> None:
    """Write ``doc`` as indented JSON atomically: a crash never leaves half a file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(doc, indent=2, ensure_ascii=False))
            f.flush()
            os.fsync(f.fileno())
        _replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> None:
    """Write one JSON object per line atomically (temporary file, then rename)."""
    write_lines(path, (json.dumps(row, ensure_ascii=False) for row in rows))


def write_lines(path: str | Path, lines: Iterable[str]) -> None:
    """Write lines of text (each without its newline) atomically (temporary file, then rename)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for line in lines:
                f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        _replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_output(path: str | Path, text: str, *, what: str, option: str) -> None:
    """Write a file the user asked for (a report, a plot) atomically; a folder that is missing
    or read-only is a :class:`StorageError` naming the file and the option, not a traceback.

    >>> write_output("/no/such/folder/r.html", "x", what="report", option="--html")
    Traceback (most recent call last):
    ragmeter.core.errors.StorageError: /no/such/folder/r.html: cannot write the report (No such file ...
    """
    from ragmeter.io.collection import write_text_atomic

    try:
        write_text_atomic(Path(path), text)
    except OSError as exc:
        raise StorageError(f"cannot write the {what} ({exc.strerror or exc})", file=str(path),
                           fix=f"give {option} a file in a folder that exists and can be written") from None
