"""Hostile input for the readers' fuzz tests (hypothesis strategies): records with one field
replaced by any JSON value, deep nesting, huge numbers, bad escapes, binary files, tables and
TREC qrels/run lines.
Each reader's test lives beside the reader (tests/io/test_corpus.py, ...); the strategies are shared,
with those of a judge's replies and envelopes (tests/judges/)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from ragmeter.core.errors import RagmeterError

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


def dump_or_null(value) -> str:
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
        return dump_or_null(row)
    if kind == 1:
        return dump_or_null(draw(VALUE))
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


@st.composite
def table_file(draw, header: str) -> bytes:
    rows = [header]
    for _ in range(draw(st.integers(0, 4))):
        rows.append(draw(st.one_of(hostile_line(), st.text(max_size=40))))
    return "\n".join(rows).encode("utf-8", "surrogatepass")


def only_typed_errors(data: bytes, name: str, read: Callable[[str], object]) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, name)
        Path(p).write_bytes(data)
        try:
            read(p)
        except RagmeterError:
            pass


@st.composite
def trec_file(draw, fields: int) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        parts = [draw(st.one_of(st.sampled_from(["q1", "q2", "Q0", "0", "d1", "d2", "1", "-1", "9" * 30, "9" * 5000,
                                                 "nan", "inf", "1e999", "#", "\x00", "é", "r"]),
                                st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)))
                 for _ in range(draw(st.sampled_from([fields, fields, fields - 1, fields + 1])))]
        lines.append(draw(st.sampled_from([" ", "\t", "  "])).join(parts))
    return "\n".join(lines).encode() + draw(st.sampled_from([b"", b"\n"]))


# A judge's reply and its envelope: any JSON value, the good verdicts, text, and brackets nested
# deep enough to break a recursive parser (tests/judges/: the judge, its replies, the envelopes).
JSON_SCALARS = st.none() | st.booleans() | st.integers(min_value=-2 ** 70, max_value=2 ** 70) | \
    st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
GOOD_VERDICTS = {"verdicts": [{"id": i, "verdict": "supported"} for i in (1, 2, 3)]}
REPLY_CONTENT = st.one_of(JSON_VALUES, st.just(json.dumps(GOOD_VERDICTS)), st.text(max_size=60),
                          st.builds(lambda d: "[" * d + "]" * d, st.integers(0, 50_000)))
