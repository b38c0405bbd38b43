"""``ragmeter.runs.result_reader``: results.jsonl in columns equals the rows the line reader reads,
the rows come back from the file as ``json.loads`` gives them, and any file the columns cannot
vouch for goes to the line reader (which names what is wrong), never into a verdict."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.result_columns import ResultColumns
from ragmeter.runs import load_run, result_reader
from ragmeter.runs.result_reader import RunRows, read_columns

CELLS = st.one_of(
    st.builds(lambda v: {"status": "scored", "value": v},
              st.one_of(st.floats(-1e6, 1e6, allow_nan=False), st.integers(-5, 5))),
    st.builds(lambda r: {"status": "not_computed", "value": None, "reason": r}, st.text(max_size=8)),
    st.builds(lambda e: {"status": "failed", "value": None, "error": e, "attempts": 2}, st.text(max_size=8)),
)
ROWS = st.lists(st.dictionaries(st.sampled_from(["ndcg@5", "mrr@5", "faithfulness", "ndcg(gain='exp')@5"]), CELLS),
                max_size=30).map(lambda ms: [{"id": f"q{i}\u00e9", "metrics": m} for i, m in enumerate(ms)])


def _write(path, rows, *, sep: str = "\n", end: str = "\n"):
    path.write_text(sep.join(json.dumps(r, ensure_ascii=False) for r in rows) + (end if rows else ""),
                    encoding="utf-8")
    return path


def _same(a: ResultColumns, b: ResultColumns) -> None:
    assert a.ids == b.ids and a.measures.keys() == b.measures.keys()
    for name in a.measures:
        x, y = a.column(name), b.column(name)
        assert np.array_equal(x.status, y.status) and np.array_equal(x.valued, y.valued)
        assert np.array_equal(x.values, y.values, equal_nan=True)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ROWS, st.booleans())
def test_columns_and_rows_equal_the_line_readers(tmp_path, rows, trailing_newline):
    path = _write(tmp_path / "results.jsonl", rows, end="\n" if trailing_newline else "")
    columns, got = read_columns(path, complete=True)
    _same(columns, ResultColumns.from_rows(rows))
    assert list(got) == rows and got == rows and len(got) == len(rows)
    if rows:
        assert got[0] == rows[0] and got[-1] == rows[-1] and got[1:3] == rows[1:3]


def test_rows_are_read_a_block_at_a_time_across_the_file(tmp_path, monkeypatch):
    rows = [{"id": f"q{i}", "metrics": {"ndcg@5": {"status": "scored", "value": i / 7}}} for i in range(500)]
    path = _write(tmp_path / "results.jsonl", rows)
    monkeypatch.setattr(result_reader, "BLOCK_BYTES", 100)  # a few lines a block, and the block loop
    columns, got = read_columns(path, complete=True)
    assert list(got) == rows and columns.values("ndcg@5") == {r["id"]: i / 7 for i, r in enumerate(rows)}


@pytest.mark.parametrize("text", [
    '{"id": "q1", "metrics": {}}\n\n{"id": "q2", "metrics": {}}\n',  # a blank line
    ' {"id": "q1", "metrics": {}}\n',  # white space before
    '{"id": "q1", "metrics": {}} {"id": "q2", "metrics": {}}\n',  # two on a line
    '{"id": "q1", "metrics": {"m": {"status": "scored", "value": true}}}\n',  # a boolean
    '{"id": "q1", "metrics": {"m": {"status": "scored", "value": NaN}}}\n',  # not JSON
    '{"id": "q1", "metrics": {"m": {"status": "scored", "value": 1e999}}}\n',  # infinite
    '{"id": "q1", "metrics": {"m": {"status": "scored", "value": null}}}\n',  # scored without a value
    '{"id": "q1", "metrics": {"m": {"status": "failed", "value": 0.5}}}\n',  # a value where none belongs
    '{"id": "q1", "metrics": {"m": {"status": "done", "value": 0.5}}}\n',  # an unknown status
    '{"id": 1, "metrics": {}}\n',  # an id that is not a string
    '{"id": "q1", "metrics": []}\n',
    '{"id": "q1", "metrics": {"m": {"status": "scored", "value": 0.5}}',  # no closing brace
    '{"id": "q1", "metrics": {"say \\"m\\"": {"status": "scored", "value": 0.5}}}\n',  # a name msgspec cannot rename to
])
def test_what_the_columns_cannot_vouch_for_goes_to_the_line_reader(tmp_path, text):
    path = tmp_path / "results.jsonl"
    path.write_text(text)
    assert read_columns(path, complete=True) is None


def test_invalid_utf8_goes_to_the_line_reader(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"id": "q\xff", "metrics": {}}\n')
    assert read_columns(path, complete=True) is None


def test_a_torn_last_line_of_a_run_still_running_is_left_out(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"id": "q1", "metrics": {}}\n{"id": "q2", "met')
    columns, rows = read_columns(path, complete=False)
    assert columns.ids == ["q1"] and list(rows) == [{"id": "q1", "metrics": {}}]
    assert read_columns(path, complete=True) is None  # in a complete run it is damage, named by the line reader


def test_a_file_changed_after_it_was_read_is_an_error_not_other_rows(tmp_path):
    rows = [{"id": "q1", "metrics": {}}, {"id": "q2", "metrics": {}}]
    path = _write(tmp_path / "results.jsonl", rows)
    _, got = read_columns(path, complete=True)
    path.write_text(path.read_text().replace("q2", "q3"))
    os.utime(path, ns=(1, 1))
    with pytest.raises(InvalidInputError, match="changed after it was read"):
        list(got)
    assert isinstance(got, RunRows)


def test_load_run_reads_columns_and_keeps_every_value(tmp_path):
    """A run read in columns gives the values and outcomes the rows hold (ints stay ints in the
    rows, floats in the columns)."""
    from tests.analysis.test_compare import make_run

    run = make_run(tmp_path / "r", {"ndcg@5": [0.5, None, 1.0], "mrr@5": [1, 0, 1]})
    again = load_run(run.path)
    assert isinstance(again.results, RunRows) and again.columns is not None
    assert again.values("ndcg@5") == {"q0": 0.5, "q1": None, "q2": 1.0}
    assert again.values("mrr") == {"q0": 1, "q1": 0, "q2": 1}
    assert again.outcomes("ndcg@5")["q1"] == {"status": "not_computed", "value": None, "reason": "no label"}
    assert again.results == run.results and math.isnan(again.columns.column("ndcg@5").values[1])
