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
        sid = str(row["id"])
        for metric, value in row.items():
            if metric == "id" or value is None or value == "":
                continue
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise InvalidInputError(f"label {value!r} is not a number", file=path, line=line, record=sid,
                                        field=metric) from None
            if math.isnan(number):
                raise InvalidInputError("label is NaN", file=path, line=line, record=sid, field=metric)
            out.setdefault(metric, {})[sid] = number
    return out
