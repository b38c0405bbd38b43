"""Human labels for judge agreement: JSONL (``{"id": ..., "faithfulness": 1}``) or CSV
(``id,faithfulness,...``). Numbers only; a missing cell means "not labeled"."""

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
