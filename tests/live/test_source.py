"""``ragmeter.live.source``: Parsing a request log's lines into samples (the lines come from
:mod:`ragmeter.live.tail`)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.live.watch import Watcher
from tests import live_judge


def test_a_log_line_without_request_id_says_how_to_get_one():
    """A hand-written log (no request_id, or "id") was quarantined line by line with no fix."""
    from ragmeter.live.source import Rejected, parse

    for line in (b'{"question": "q", "answer": "a"}', b'{"id": "r2", "question": "q", "answer": "a"}'):
        rejected = parse(line)
        assert isinstance(rejected, Rejected) and "ragmeter.log_request" in rejected.reason, rejected


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


@FUZZ
@given(st.lists(st.one_of(hostile_line(), st.binary(max_size=40).map(lambda b: b.decode("latin-1"))), max_size=6))
def test_live_log_reader_and_watcher_never_raise(lines):
    from ragmeter.judges import Judge, ScriptedBackend
    from ragmeter.live.source import LoggedRequest, Rejected, parse
    from ragmeter.live.watch import Watcher
    from tests import live_judge

    raw = [line.encode("utf-8", "surrogatepass") for line in lines]
    for r in raw:
        assert isinstance(parse(r), (LoggedRequest, Rejected))  # never raises
    with tempfile.TemporaryDirectory() as d:
        log = Path(d, "req.jsonl")
        log.write_bytes(b"\n".join(raw) + b"\n" + live_judge.request_line(1).encode())
        w = Watcher(str(log), Judge(ScriptedBackend(live_judge.scripted)), Path(d, "state"), metrics=("faithfulness",))
        w.poll()
        while w.pending:
            w.poll()
        assert json.loads(Path(d, "state", "offset.json").read_text())["offset"] == log.stat().st_size
        assert w.counts["scored"] + w.counts["malformed"] + w.counts["duplicates"] <= w.counts["lines"]


def watcher(tmp_path, log, **kw):
    return Watcher(str(log), Judge(ScriptedBackend(live_judge.scripted)), tmp_path / "state", **kw)


@pytest.mark.parametrize("span_json", [
    {"span_id": "s1", "attributes": {"input.value": "Q?", "output.value": "ok",
                                     "retrieval.documents.0.document.id": "d1",
                                     "retrieval.documents.0.document.content": "text"}},
])
def test_openinference_spans_are_read(tmp_path, span_json):
    log = tmp_path / "spans.jsonl"
    log.write_text(json.dumps(span_json) + "\n")
    w = watcher(tmp_path, log)
    assert w.poll() == 1
    assert json.loads((tmp_path / "state" / "scored.jsonl").read_text())["id"] == "s1"
