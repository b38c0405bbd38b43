"""Human labels for judge agreement: JSONL (``{"id": ..., "faithfulness": 1}``) or CSV
(``id,faithfulness,...``). Numbers only; a missing cell means "not labeled".

One label per sample and metric: the same id may come on several rows for different metrics
(``{"id": "q1", "faithfulness": 1}`` then ``{"id": "q1", "answer_relevancy": 0.5}``), but a second
value for the same id and metric is an error naming both lines, never a silent last-wins."""

from __future__ import annotations

import math
from pathlib import Path

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.csv_table import iter_csv
from ragmeter.io.jsonl import iter_jsonl


def load_labels(path: str | Path) -> dict[str, dict[str, float]]:
    """metric -> {sample id -> human value}."""
    path = str(path)
    rows = iter_csv(path) if path.lower().endswith(".csv") else iter_jsonl(path)
    out: dict[str, dict[str, float]] = {}
    where: dict[tuple[str, str], int] = {}  # (metric, id) -> the line that labeled it
    for line, row in rows:
        if not isinstance(row, dict) or "id" not in row:
            raise InvalidInputError("each label row needs an id", file=path, line=line, field="id")
        if not isinstance(row["id"], (str, int)) or isinstance(row["id"], bool):
            raise InvalidInputError("the id must be a string", file=path, line=line, field="id")
        sid = str(row["id"])
        for metric, value in row.items():
            if metric == "id" or value is None or value == "":
                continue
            number = _number(value)
            if number is None:
                shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."
                raise InvalidInputError(f"label {shown} is not a finite number", file=path, line=line, record=sid,
                                        field=metric, fix="write labels as numbers, e.g. 0, 1 or 0.5")
            first = where.setdefault((metric, sid), line)
            if first != line:
                raise InvalidInputError(f"sample {sid!r} is labeled twice for {metric} (lines {first} and {line})",
                                        file=path, line=line, record=sid, field=metric,
                                        fix="keep one label per sample and metric (remove or merge the other line)")
            out.setdefault(metric, {})[sid] = number
    return out


def _number(value: object) -> float | None:
    """A finite float from a JSON number or a CSV cell's text; None otherwise."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None
