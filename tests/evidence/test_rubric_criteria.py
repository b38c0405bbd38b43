"""``ragmeter.evidence.rubric_criteria``: Rubric criteria: what a rubric score judges, on which scale,
with which examples (a source of the rubric evidence, as the judge is)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter import InvalidInputError
from ragmeter.evidence.rubric_criteria import load_rubric_criteria
from tests.hostile import FUZZ, VALUE, dump_or_null, hostile_file, hostile_line, only_typed_errors
from tests.io.test_dataset import write


@st.composite
def criteria_file(draw) -> bytes:
    item = {"name": "c", "description": "d", "scale": [1, 5], "examples": [{"answer": "a", "score": 3}]}
    if draw(st.booleans()):
        item[draw(st.sampled_from(list(item)))] = draw(VALUE)
    doc = draw(st.sampled_from([{"criteria": [item]}, [item], {"criteria": [item, item]}, item]))
    text = dump_or_null(doc) if draw(st.booleans()) else draw(hostile_line())
    return text.encode("utf-8", "surrogatepass")


@pytest.mark.slow
@FUZZ
@given(st.one_of(criteria_file(), hostile_file()))
def test_criteria(data):
    from ragmeter.evidence.rubric_criteria import load_rubric_criteria

    only_typed_errors(data, "c.json", load_rubric_criteria)
    only_typed_errors(data, "c.yaml", load_rubric_criteria)


@pytest.mark.parametrize("name,text,words", [
    ("c.json", "{", r"c.json, line 1: not valid JSON"),
    ("c.json", '{"criteria": ' + "[" * 100_000, "JSON nested too deeply"),
    ("c.json", '{"criteria": [' + "9" * 5000 + "]}", "a number is too long"),
    ("c.json", b"\xff\xfe", "not valid UTF-8"),
    ("c.json", "", "the file is empty"),
    ("c.yaml", "criteria: [a, b\n  - c: d: e\n", r"c.yaml, line \d+: not valid YAML"),
    ("c.json", '{"criteria": [{"name": "x", "description": "d", "examples": 3}]}', 'field "examples"'),
    ("c.json", '{"criteria": [{"name": "x", "description": "d"}, {"name": "x", "description": "e"}]}',
     "two criteria have this name"),
])
def test_criteria_file_errors_are_located(tmp_path, name, text, words):
    p = write(tmp_path, name, text)
    with pytest.raises(InvalidInputError, match=words):
        load_rubric_criteria(p)
    with pytest.raises(InvalidInputError):
        load_rubric_criteria(tmp_path / "missing.json")
