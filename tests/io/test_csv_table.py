"""``ragmeter.io.csv_table``: CSV reader for datasets and corpora."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter import InvalidInputError, load_dataset
from tests.hostile import FUZZ, hostile_file, only_typed_errors, table_file


def _load_dataset(p: str):
    from ragmeter import load_dataset

    return load_dataset(p)


@FUZZ
@given(st.one_of(table_file("id,question,retrieved,relevant,answer,metadata,answerable"), hostile_file()))
def test_dataset_csv(data):
    only_typed_errors(data, "d.csv", _load_dataset)


def test_csv_unclosed_quote_is_located(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text('id,question\nq1,fine\nq2,"never closed\nq3,swallowed\n')
    with pytest.raises(InvalidInputError, match=r"d.csv, line 3: a quoted cell is never closed"):
        load_dataset(p)


def test_csv_cell_over_128_kb_is_read(tmp_path):
    p = tmp_path / "d.csv"
    long_answer = "word " * 60_000  # 300 KB, past the csv module's 131072 default
    p.write_text(f'id,question,answer\nq1,Q?,"{long_answer}"\n')
    (sample,) = load_dataset(p).samples
    assert sample.answer == long_answer


def test_a_bad_json_cell_names_the_record_and_the_fix(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text('id,question,retrieved,relevant\nq1,What?,"[""a"" ""b""]",a\n')
    with pytest.raises(InvalidInputError) as caught:
        load_dataset(bad)
    text = str(caught.value)
    assert 'line 2 (id "q1"), field "retrieved": the cell is not valid JSON (Expecting' in text
    assert text.count("not valid JSON") == 1 and "Fix: write a JSON list" in text
