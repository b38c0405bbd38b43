"""``ragmeter.core.result_columns``: a run's rows in columns, as ``Run.values`` and the summary's
counts read them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ragmeter.core.result_columns import ABSENT, OTHER, ResultColumns, columns_of


def test_columns_keep_status_value_and_absence():
    rows = [{"id": "a", "metrics": {"m": {"status": "scored", "value": 1}}},
            {"id": "b", "metrics": {"m": {"status": "failed", "value": None, "error": "x"}, "k": {"status": "odd"}}},
            {"id": "c", "metrics": {"m": {"status": "scored", "value": math.nan}}},  # built in Python, past the reader
            {"id": "d", "metrics": {"m": {"status": "scored", "value": "high"}}}]
    cols = ResultColumns.from_rows(rows)
    m = cols.column("m")
    assert m.status.tolist() == [0, 2, 0, 0] and m.valued.tolist() == [True, False, True, True]
    assert m.values[0] == 1.0 and all(math.isnan(v) for v in m.values[1:])
    assert cols.column("k").status.tolist() == [ABSENT, OTHER, ABSENT, ABSENT]
    assert cols.column("never").status.tolist() == [ABSENT] * 4 and not cols.column("never").valued.any()
    assert cols.counts("m") == {"scored": 3, "not_computed": 0, "failed": 1}
    values = cols.values("m")
    assert values["a"] == 1.0 and values["b"] is None and math.isnan(values["c"])
    assert list(values) == ["a", "b", "c", "d"]
    assert cols.values("k") == {"b": None} and len(cols) == 4


def test_columns_of_a_run_prefers_the_readers_and_builds_them_otherwise():
    from ragmeter.runs.store import Run

    rows = [{"id": "q1", "metrics": {"m": {"status": "scored", "value": 0.25}}}]
    run = Run(Path("r"), {}, rows, {})
    assert run.columns is not None and np.array_equal(columns_of(run).column("m").values, [0.25])

    class Plain:  # any object with rows
        results = rows

    assert columns_of(Plain()).values("m") == {"q1": 0.25}
