"""Issue 29, item 12: ``agreement --labels`` with a sample labeled twice for one metric is an
error naming both lines (the last value won in silence); one metric per row is still fine."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter import InvalidInputError
from ragmeter.io.labels import load_labels
from tests.hostile import FUZZ, hostile_file, only_typed_errors, table_file
from tests.io.test_dataset import write


def test_a_second_label_for_the_same_sample_and_metric_names_both_lines(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text('{"id": "q1", "faithfulness": 1}\n{"id": "q2", "faithfulness": 0}\n'
                    '{"id": "q1", "faithfulness": 0}\n')
    with pytest.raises(InvalidInputError, match=r"labeled twice for faithfulness \(lines 1 and 3\)") as err:
        load_labels(path)
    assert err.value.line == 3 and err.value.field == "faithfulness"


def test_the_same_in_csv(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("id,faithfulness\nq1,1\nq1,1\n")
    with pytest.raises(InvalidInputError, match=r"lines 2 and 3"):
        load_labels(path)


def test_one_metric_per_row_for_the_same_sample_is_read(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text('{"id": "q1", "faithfulness": 1}\n{"id": "q1", "answer_relevancy": 0.5}\n')
    assert load_labels(path) == {"faithfulness": {"q1": 1.0}, "answer_relevancy": {"q1": 0.5}}


@pytest.mark.slow
@FUZZ
@given(st.one_of(hostile_file(), table_file("id,faithfulness,answer_relevancy")))
def test_labels(data):
    from ragmeter.io.labels import load_labels

    only_typed_errors(data, "labels.jsonl", load_labels)
    only_typed_errors(data, "labels.csv", load_labels)


def test_labels_file_refuses_non_finite_and_huge_numbers(tmp_path):
    p = write(tmp_path, "l.jsonl", '{"id": "q1", "faithfulness": ' + "9" * 400 + "}\n")
    with pytest.raises(InvalidInputError, match=r"l.jsonl, line 1 \(id \"q1\"\), field \"faithfulness\""):
        load_labels(p)
    p = write(tmp_path, "l.csv", "id,faithfulness\nq1,inf\n")
    with pytest.raises(InvalidInputError, match="not a finite number"):
        load_labels(p)
