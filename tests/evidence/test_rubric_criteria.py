"""``ragmeter.evidence.rubric_criteria``: Rubric criteria: what a rubric score judges, on which scale,
with which examples (a source of the rubric evidence, as the judge is)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter import InvalidInputError
from ragmeter.core.errors import RagmeterError
from ragmeter.evidence.rubric_criteria import load_criteria
from tests.io.test_dataset import write

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)


HOSTILE_TEXT = st.sampled_from(["", " ", "\x00", "\x1b[2J", "\u2028", "\u0085", "\x0c", "\ufeff", "\r", "a\nb",
                                "[red]x", "=cmd|' /C calc'!A0", "\ud800", "\udfff", "é", "𝔘", "NaN", "-", "0"])


HOSTILE_NUMBER = st.sampled_from([0, 1, -1, 2 ** 63, -(2 ** 63) - 1, 10 ** 400, float("inf"), float("-inf"),
                                  float("nan"), 1e308, -0.0, True, False])


SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20), HOSTILE_TEXT,
                   HOSTILE_NUMBER)


VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.one_of(st.text(max_size=8), HOSTILE_TEXT),
                                                                      inner, max_size=4)), max_leaves=12)


FIELDS = ["id", "question", "retrieved", "relevant", "context", "answer", "reference", "answerable", "metadata",
          "reference_claims", "answer_claims", "text", "request_id", "ts", "attributes", "span_id", "query",
          "turns", "conversation_id", "criteria", "name", "description", "scale", "examples", "faithfulness"]


GOOD = {"id": "q1", "question": "Q?", "retrieved": ["a", {"id": "b", "score": 0.5, "text": "t"}],
        "relevant": {"a": 1}, "context": ["a"], "answer": "ok", "reference": "r", "metadata": {"k": "v"}}


def _dump(value) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (ValueError, RecursionError):
        return "null"


@st.composite
def hostile_line(draw) -> str:
    kind = draw(st.integers(0, 5))
    if kind == 0:  # a good record with one field replaced
        row = dict(GOOD)
        row[draw(st.sampled_from(FIELDS))] = draw(VALUE)
        return _dump(row)
    if kind == 1:
        return _dump(draw(VALUE))
    if kind == 2:  # deep nesting
        depth = draw(st.sampled_from([10, 900, 5000, 100_000]))
        return '{"id": "q", "metadata": ' + "[" * depth + "]" * draw(st.sampled_from([0, depth]))
    if kind == 3:  # long integers and escapes written by hand (json.dumps cannot write some of them)
        return draw(st.sampled_from([
            '{"id": "q", "relevant": {"a": ' + "9" * 5000 + "}}",
            '{"id": ' + "1" * 4000 + "}",
            '{"id": "q", "question": "\\ud800"}',
            '{"id": "q", "relevant": {"a": 1e999}}',
            '{"id": "q", "retrieved": [{"id": "a", "score": NaN}]}',
            '{"id": "q", "answer": "x\u2028y"}',
            '\ufeff{"id": "q"}',
            '{"request_id": "r", "ts": "yesterday", "question": "q"}',
            '{"attributes": {"input.value": 1}, "context": [1]}',
        ]))
    if kind == 4:
        return draw(st.text(max_size=60))
    return ",".join(draw(st.lists(st.one_of(HOSTILE_TEXT, st.text(max_size=10), st.just('"')), max_size=6)))


@st.composite
def hostile_file(draw) -> bytes:
    if draw(st.integers(0, 4)) == 0:
        return draw(st.binary(max_size=300))
    lines = draw(st.lists(hostile_line(), min_size=0, max_size=5))
    sep = draw(st.sampled_from(["\n", "\r\n", "\n\n"]))
    text = sep.join(lines) + draw(st.sampled_from(["", "\n"]))
    return text.encode("utf-8", "surrogatepass")


def _only_typed_errors(data: bytes, name: str, read: Callable[[str], object]) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, name)
        Path(p).write_bytes(data)
        try:
            read(p)
        except RagmeterError:
            pass


@st.composite
def criteria_file(draw) -> bytes:
    item = {"name": "c", "description": "d", "scale": [1, 5], "examples": [{"answer": "a", "score": 3}]}
    if draw(st.booleans()):
        item[draw(st.sampled_from(list(item)))] = draw(VALUE)
    doc = draw(st.sampled_from([{"criteria": [item]}, [item], {"criteria": [item, item]}, item]))
    text = _dump(doc) if draw(st.booleans()) else draw(hostile_line())
    return text.encode("utf-8", "surrogatepass")


@pytest.mark.slow
@FUZZ
@given(st.one_of(criteria_file(), hostile_file()))
def test_criteria(data):
    from ragmeter.evidence.rubric_criteria import load_criteria

    _only_typed_errors(data, "c.json", load_criteria)
    _only_typed_errors(data, "c.yaml", load_criteria)


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
        load_criteria(p)
    with pytest.raises(InvalidInputError):
        load_criteria(tmp_path / "missing.json")
