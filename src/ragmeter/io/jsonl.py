"""JSON Lines reader: one JSON object per line; blank lines are allowed, nothing else is skipped."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.text import read_text


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, decoded value)``; a line that is not JSON raises with its number."""
    text = read_text(path)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(
                f"not valid JSON ({exc.msg} at column {exc.colno})", file=str(path), line=number,
                fix="write one complete JSON object per line",
            ) from None
