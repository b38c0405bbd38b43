"""A run's per-sample results in columns: the sample ids, and per measure one status code and
one value per sample, so that the commands reading runs together (``compare``, ``gate``,
``report``) read 500,000 samples in arrays instead of 2.5 million dictionaries.

Each row of ``results.jsonl`` is ``{"id": ..., "metrics": {name: {"status": ..., "value": ...}}}``;
a measure's column holds, per row, the status's code (:data:`STATUS_CODES`; :data:`ABSENT` where
the row does not name the measure), the value as a float (NaN where there is none), and whether
the row gave a value at all (``valued``: what :meth:`values` keeps, as ``Run.values`` always has).

>>> rows = [{"id": "q1", "metrics": {"mrr": {"status": "scored", "value": 0.5}}},
...         {"id": "q2", "metrics": {"mrr": {"status": "not_computed", "value": None, "reason": "no label"}}},
...         {"id": "q3", "metrics": {}}]
>>> cols = ResultColumns.from_rows(rows)
>>> cols.values("mrr"), cols.counts("mrr")
({'q1': 0.5, 'q2': None}, {'scored': 1, 'not_computed': 1, 'failed': 0})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

STATUS_CODES = {"scored": 0, "not_computed": 1, "failed": 2}
ABSENT = -1  # the row does not name the measure
OTHER = 3  # a status that is none of the three (a run the reader refused; rows built in Python)


@dataclass(frozen=True)
class MeasureColumn:
    """One measure over the rows: ``status`` (int8 codes), ``values`` (float64, NaN where none)
    and ``valued`` (bool: the row gave a value, which may be NaN in rows built in Python)."""

    status: np.ndarray
    values: np.ndarray
    valued: np.ndarray

    @classmethod
    def absent(cls, n: int) -> MeasureColumn:
        return cls(np.full(n, ABSENT, dtype=np.int8), np.full(n, np.nan), np.zeros(n, dtype=bool))


@dataclass(frozen=True)
class ResultColumns:
    """The ids (in the file's order) and each measure's column, by the name the run records."""

    ids: list[str]
    measures: Mapping[str, MeasureColumn]

    def __len__(self) -> int:
        return len(self.ids)

    def column(self, name: str) -> MeasureColumn:
        """``name``'s column; a measure no row names is absent from every row."""
        found = self.measures.get(name)
        return found if found is not None else MeasureColumn.absent(len(self.ids))

    def values(self, name: str) -> dict[str, float | None]:
        """sample id -> value (None where the cell has none), for the rows that name ``name``."""
        col = self.column(name)
        held = np.flatnonzero(col.status != ABSENT)
        values = col.values[held].tolist()
        valued = col.valued[held].tolist()
        return {self.ids[i]: v if ok else None for i, v, ok in zip(held.tolist(), values, valued)}

    def counts(self, name: str) -> dict[str, int]:
        """How many rows hold ``name`` in each status."""
        found = np.bincount(self.column(name).status.astype(np.int64) + 1, minlength=OTHER + 2)
        return {status: int(found[code + 1]) for status, code in STATUS_CODES.items()}

    @classmethod
    def from_rows(cls, rows: Iterable[dict]) -> ResultColumns:
        """Columns of rows as ``results.jsonl`` holds them (or as a ``Run`` built in Python does)."""
        rows = list(rows)
        n = len(rows)
        names: dict[str, None] = {}
        for r in rows:
            names.update(dict.fromkeys(r["metrics"]))
        measures = {}
        for name in names:
            status = np.full(n, ABSENT, dtype=np.int8)
            values = np.full(n, np.nan)
            valued = np.zeros(n, dtype=bool)
            for i, r in enumerate(rows):
                cell = r["metrics"].get(name)
                if cell is None:
                    continue
                status[i] = STATUS_CODES.get(cell.get("status"), OTHER)
                value = cell.get("value")
                if value is not None:
                    valued[i] = True
                    try:
                        values[i] = value
                    except (TypeError, ValueError):  # not a number: left NaN, which no verdict passes
                        pass
            measures[name] = MeasureColumn(status, values, valued)
        return cls([r["id"] for r in rows], measures)


def columns_of(run) -> ResultColumns:
    """A run's columns: the ones its reader built, else built from its rows."""
    found = getattr(run, "columns", None)
    return found if isinstance(found, ResultColumns) else ResultColumns.from_rows(run.results)
