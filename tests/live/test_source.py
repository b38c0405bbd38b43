"""``ragmeter.live.source``: Parsing a request log's lines into samples (the lines come from
:mod:`ragmeter.live.tail`)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.live.watch import Watcher
from tests import live_judge
from tests.hostile import FUZZ, hostile_line


def test_a_log_line_without_request_id_says_how_to_get_one():
    """A hand-written log (no request_id, or "id") was quarantined line by line with no fix."""
    from ragmeter.live.source import Rejected, parse

    for line in (b'{"question": "q", "answer": "a"}', b'{"id": "r2", "question": "q", "answer": "a"}'):
        rejected = parse(line)
        assert isinstance(rejected, Rejected) and "ragmeter.log_request" in rejected.reason, rejected


@FUZZ
@given(st.lists(st.one_of(hostile_line(), st.binary(max_size=40).map(lambda b: b.decode("latin-1"))), max_size=6))
def test_live_log_reader_and_watcher_never_raise(lines):
    from ragmeter.live.source import LoggedRequest, Rejected, parse
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


@pytest.mark.parametrize("span_json", [
    {"span_id": "s1", "attributes": {"input.value": "Q?", "output.value": "ok",
                                     "retrieval.documents.0.document.id": "d1",
                                     "retrieval.documents.0.document.content": "text"}},
])
def test_openinference_spans_are_read(tmp_path, span_json):
    log = tmp_path / "spans.jsonl"
    log.write_text(json.dumps(span_json) + "\n")
    w = live_judge.watcher(tmp_path, log)
    assert w.poll() == 1
    assert json.loads((tmp_path / "state" / "scored.jsonl").read_text())["id"] == "s1"


_CHUNK = st.fixed_dictionaries(
    {"id": st.one_of(st.sampled_from(["c1", "c2", " ", "", "c\u00e91"]), st.integers(0, 3))},
    optional={"text": st.one_of(st.none(), st.text(max_size=5), st.integers(0, 2)),
              "score": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-2, 2),
                                 st.booleans(), st.just(10 ** 400)),
              "extra": st.just(1)})
_LINE = st.fixed_dictionaries(
    {"request_id": st.one_of(st.sampled_from(["r1", " ", "", "r\u00e9"]), st.integers(0, 9), st.booleans())},
    optional={"question": st.one_of(st.none(), st.text(max_size=6), st.integers(0, 1)),
              "answer": st.one_of(st.none(), st.text(max_size=6), st.integers(0, 1)),
              "ts": st.one_of(st.none(), st.floats(allow_nan=True), st.integers(0, 10), st.just("2024-01-01T00:00:00Z"),
                              st.just("yesterday"), st.booleans()),
              "retrieved": st.one_of(st.none(), st.lists(_CHUNK, max_size=3), st.lists(st.sampled_from(["c1", "c2"]),
                                                                                      max_size=2), st.text(max_size=2)),
              "context": st.one_of(st.none(), st.just(["c1"])), "metadata": st.one_of(st.none(), st.just({"a": 1}),
                                                                                      st.just({}))})


@FUZZ
@given(_LINE)
def test_the_plain_line_fast_path_gives_what_the_row_reader_gives(obj):
    """Every line the fast path takes gives the request (or the rejection) the dataset's row reader
    gives it; every other line is left to the row reader."""
    from ragmeter.core.errors import InvalidInputError
    from ragmeter.live.source import _plain_request, _request

    def outcome(read):
        try:
            return read(obj)
        except InvalidInputError as exc:
            return ("rejected", exc.problem, exc.field)

    fast = outcome(_plain_request)
    if fast is not None:
        assert fast == outcome(_request)


def test_a_plain_line_takes_the_fast_path():
    from ragmeter.live.source import _plain_request

    line = json.loads(live_judge.request_line(3))
    req = _plain_request(line)
    assert req is not None and req.id == "r3" and req.sample.retrieved[0].text == "Some evidence."


@pytest.mark.parametrize("start", [1_700_000_000_000_000_000, "1700000000000000000"])
def test_a_span_start_time_in_unix_nanoseconds_is_read_as_nanoseconds(tmp_path, start):
    """``startTimeUnixNano`` counts nanoseconds (OTLP), as a number or a decimal string: the
    watcher read an integer one as seconds (a request dated 1.7e18, which never left the last
    hour's window) and a string one as no time at all (dated when it was read)."""
    from ragmeter.live.source import LoggedRequest, parse

    span = {"span_id": "s1", "startTimeUnixNano": start,
            "attributes": {"input.value": "Q?", "output.value": "ok", "retrieval.documents.0.document.id": "d1",
                           "retrieval.documents.0.document.content": "text"}}
    read = parse(json.dumps(span).encode())
    assert isinstance(read, LoggedRequest) and read.ts == 1_700_000_000_000_000_000 / 1e9
    log = tmp_path / "spans.jsonl"
    log.write_text(json.dumps(span) + "\n")
    w = live_judge.watcher(tmp_path, log)
    assert w.poll() == 1
    assert json.loads((tmp_path / "state" / "scored.jsonl").read_text())["ts"] == 1.7e9
    assert [r["id"] for r in w.recent] == ["s1"] and not w.hour  # from 2023: not in the last hour's window
