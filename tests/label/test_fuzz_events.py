"""Hypothesis fuzz of the label events reader and of opening a labels file for writing (issue 29,
items 4 and 12): whatever bytes the file holds, reading gives events or an ``InvalidInputError``
naming the line, never another exception; opening it either refuses it unchanged, or keeps every
complete line and changes at most a torn last line (cut) or a whole last event (given its newline)."""

from __future__ import annotations

import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError
from ragmeter.label.store import LabelStore, check_event, read_events

NAMES = st.sampled_from(["alice", "bob", "alice\n", "a\tb", "", "x" * 70, "Zoë", "c@d.e"])
EVENTS = st.fixed_dictionaries({"labeler": NAMES, "sample": st.sampled_from(["q1", "q2", ""]),
                                "kind": st.sampled_from(["grade", "final", "note", "unanswerable", "other"]),
                                "chunk": st.sampled_from(["c1", "c2", ""]),
                                "grade": st.sampled_from([0, 1, 3, 4, None, True, "2"]),
                                "text": st.text(max_size=20), "value": st.sampled_from([True, False, 1]),
                                "eid": st.sampled_from([None, "e1", "e2", "", "x" * 80])})


def _line(e: dict) -> bytes:
    """An event as the writer writes it when it is valid, else as some other program would."""
    try:
        return json.dumps(check_event({k: v for k, v in e.items() if v is not None}), separators=(",", ":")).encode()
    except (ValueError, TypeError):
        return json.dumps(e).encode()


PIECES = st.one_of(EVENTS.map(_line), st.binary(max_size=40), st.just(b"[" * 5000),
                   st.just(b'{"id": "q1", "question": "a dataset line"}'), st.just(b""))


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(PIECES, max_size=6), tail=st.one_of(st.none(), PIECES, EVENTS.map(lambda e: _line(e)[:25])))
def test_reading_and_opening_any_file(tmp_path_factory, pieces, tail):
    path = tmp_path_factory.mktemp("fuzz") / "labels.jsonl"
    data = b"".join(p.replace(b"\n", b" ") + b"\n" for p in pieces) + (tail.replace(b"\n", b" ") if tail else b"")
    path.write_bytes(data)
    try:
        events = list(read_events(path))
    except InvalidInputError as exc:
        assert exc.line is not None and exc.file == str(path)
        events = None
    try:
        store = LabelStore(path)
    except InvalidInputError:
        assert events is None, "the reader took a file the writer refused"
        assert path.read_bytes() == data, "a refused file was written"
        return
    assert events is not None, "the writer took a file the reader refused"
    store.close()
    after = path.read_bytes()
    complete = data[:data.rfind(b"\n") + 1]
    assert after.startswith(complete), "a complete line was changed"
    assert after in (complete, data + b"\n"), "more than the torn tail changed"
    assert [e for e in read_events(path)] == events
    assert store.state.events == len(events)
    os.remove(path)
