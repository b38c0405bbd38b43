"""JSON Lines reader: one JSON object per line; blank lines are allowed, nothing else is skipped.

Lines end at ``\n`` only (see :mod:`ragmeter.io.json_text`), as in the ``--block`` reader."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragmeter.io.json_text import decode_json, split_lines
from ragmeter.io.text import read_text


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, decoded value)``; a line that is not JSON raises with its number."""
    text = read_text(path)
    for number, line in split_lines(text):
        if not line.strip():
            continue
        yield number, decode_json(line, file=str(path), line=number)
