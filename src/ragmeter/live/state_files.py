"""The watcher's state files (``scored.jsonl``, ``quarantine.jsonl``, ``feedback.jsonl``), JSON
lines that survive a kill: each poll's records are appended in one write, and read back on start
with a torn last line (a kill mid-write) cut off and a damaged line skipped, both said in the
watcher's notes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

_JSON = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(r, ensure_ascii=False), one encoder made once


def append_records(path: Path, records: list[dict]) -> None:
    """Append JSON lines in one write (a kill leaves at most one torn last line, which
    :func:`read_records` trims)."""
    with open(path, "a", encoding="utf-8") as f:
        f.write("".join(_JSON(r) + "\n" for r in records))
        f.flush()


def read_records(path: Path, notes: list[str], valid: Callable[[dict], bool]) -> list[dict]:
    """The complete JSON-object lines of a state file. A torn last line (a kill mid-append) is
    cut off the file; a damaged line elsewhere is skipped; both are said in ``notes``."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with open(path, "r+b") as f:
            f.truncate(end)
        notes.append(f"{path}: trimmed a torn last line ({len(data) - end} bytes) left by an interrupted write")
        data = data[:end]
    out, damaged = [], 0
    for raw in data.split(b"\n")[:-1]:
        try:
            rec = json.loads(raw)
        except (ValueError, RecursionError):
            rec = None
        if isinstance(rec, dict) and valid(rec):
            out.append(rec)
        elif raw.strip():
            damaged += 1
    if damaged:
        notes.append(f"{path}: skipped {damaged} damaged line(s)")
    return out
