"""``records/dates.py``: dates read from text, every reading a written date allows."""

from __future__ import annotations

from ragmeter.records import read_date


def test_dates_known_answers():
    assert read_date("2026-10-05").candidates == {(2026, 10, 5)}
    assert read_date("05/10/2026").candidates == {(2026, 10, 5), (2026, 5, 10)}
    assert read_date("5/10/26").candidates == {(2026, 10, 5), (2026, 5, 10)}
    assert read_date("1/2/99").candidates == {(1999, 2, 1), (1999, 1, 2)}
    assert read_date("Sept 5 2026").candidates == {(2026, 9, 5)}
    assert read_date("29 February 2027") is None and read_date("29 February 2028").candidates == {(2028, 2, 29)}
