"""Issue 29, items 4 and 12: the labels file.

A refused file is never written: ``ragmeter label DATA --labels WRONGFILE`` cut the last record
off the wrong file (a corpus 577 -> 528 bytes, the dataset itself lost its last sample) while
refusing it, because the torn-tail repair ran before the check. A labeler name with a newline
was stored (and broke the agreement table). A click sent twice (same ``eid``) is written once.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError
from ragmeter.label.store import LabelStore, check_event, load_state, read_events


def _ev(**kw) -> dict:
    return {"labeler": "alice", "sample": "q1", "kind": "grade", "chunk": "c1", "grade": 1, **kw}


CORPUS = '{"id": "c1", "text": "The R2 carries a 24-month warranty."}\n{"id": "c2", "text": "Returns: 30 days."}'
DATASET = ('{"id": "q1", "question": "Is my R2 covered?", "retrieved": ["c1", "c2"]}\n'
           '{"id": "q2", "question": "Can I return it?", "retrieved": ["c2"]}')


@pytest.mark.parametrize("text", [CORPUS, DATASET, '{"id": "only one line, no newline"}', "plain text, no newline"])
def test_a_file_that_is_not_a_labels_file_is_refused_untouched(tmp_path, text):
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(text)  # no newline at the end: the repair of a torn tail would have cut its last line
    before = wrong.read_bytes()
    with pytest.raises(InvalidInputError, match="not a labels file") as err:
        LabelStore(wrong)
    assert err.value.line == 1 and "nothing was written" in str(err.value)
    assert wrong.read_bytes() == before


def test_the_label_command_refuses_the_wrong_file_and_leaves_it_whole(tmp_path, cli):
    data, corpus = tmp_path / "d.jsonl", tmp_path / "corpus.jsonl"
    data.write_text(DATASET)
    corpus.write_text(CORPUS)
    for wrong in (corpus, data):
        before = wrong.read_bytes()
        out = cli("label", data, "--corpus", corpus, "--labels", wrong, "--port", "0")
        assert out.exit_code == 2 and "not a labels file" in out.output
        assert wrong.read_bytes() == before


def test_a_torn_event_is_still_cut_and_a_whole_last_event_kept(tmp_path):
    path = tmp_path / "l.jsonl"
    store = LabelStore(path)
    store.append(_ev())
    store.close()
    with open(path, "ab") as f:
        f.write(json.dumps(check_event(_ev(chunk="c2", grade=3)), separators=(",", ":")).encode())  # no newline
    assert [e["chunk"] for e in read_events(path)] == ["c1", "c2"]
    store = LabelStore(path)
    assert store.trimmed == 0
    store.append(_ev(chunk="c3"))
    store.close()
    assert [json.loads(x)["chunk"] for x in path.read_text().splitlines()] == ["c1", "c2", "c3"]
    with open(path, "ab") as f:
        f.write(b'{"v":1,"at":"2026-')  # a crash mid-write
    store = LabelStore(path)
    assert store.trimmed == len(b'{"v":1,"at":"2026-')
    store.close()
    assert path.read_text().endswith('"c3","grade":1}\n')


@pytest.mark.parametrize("name", ["alice\n", "alice\nbob", "al\tice", "ali\x00ce", "alice\r", "\u2028alice"])
def test_a_labeler_name_with_a_newline_or_control_character_is_refused(tmp_path, name):
    store = LabelStore(tmp_path / "l.jsonl")
    with pytest.raises(ValueError, match="no newline or control character"):
        store.append(_ev(labeler=name))
    store.close()
    assert (tmp_path / "l.jsonl").read_text() == ""


def test_a_stored_name_with_a_newline_is_a_located_error(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps({"v": 1, "at": "x", **_ev(labeler="alice\n")}) + "\n")
    with pytest.raises(InvalidInputError, match="labeler must be a name") as err:
        load_state(path)
    assert err.value.line == 1


def test_the_label_command_refuses_a_newline_in_labeler(tmp_path, cli):
    data = tmp_path / "d.jsonl"
    data.write_text(DATASET + "\n")
    out = cli("label", data, "--labeler", "alice\n", "--port", "0")
    assert out.exit_code == 2 and "no newline or control character" in out.output


def test_a_click_sent_twice_is_written_once_even_after_a_restart(tmp_path):
    path = tmp_path / "l.jsonl"
    store = LabelStore(path)
    first = store.append(_ev(eid="e-1"))
    again = store.append(_ev(eid="e-1"))
    assert "repeat" not in first and again["repeat"]
    store.close()
    store = LabelStore(path)  # a restarted server knows the clicks already saved
    assert store.append(_ev(eid="e-1"))["repeat"]
    store.append(_ev(eid="e-2", grade=2))
    store.close()
    assert [json.loads(x)["eid"] for x in path.read_text().splitlines()] == ["e-1", "e-2"]
    with pytest.raises(ValueError, match="eid"):
        check_event(_ev(eid="x" * 65))


def test_every_event_is_on_disk_before_append_returns(tmp_path):
    path = tmp_path / "l.jsonl"
    store = LabelStore(path)
    store.append(_ev())
    store.append(_ev(grade=3))
    store.append(_ev(chunk="c2", grade=None))
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[1])["grade"] == 3
    assert load_state(path).grades == {"alice": {"q1": {"c1": 3}}}  # the last event wins
    store.close()


def test_a_torn_last_line_is_ignored_by_readers_and_cut_by_the_writer(tmp_path):
    path = tmp_path / "l.jsonl"
    store = LabelStore(path)
    store.append(_ev())
    store.close()
    with open(path, "ab") as f:
        f.write(b'{"v":1,"labeler":"alice","sample":"q1","kind":"gra')  # a crash mid-write
    assert [e["grade"] for e in read_events(path)] == [1]
    store = LabelStore(path)
    assert store.trimmed == len(b'{"v":1,"labeler":"alice","sample":"q1","kind":"gra')
    store.append(_ev(chunk="c2", grade=2))
    store.close()
    assert [json.loads(x)["chunk"] for x in path.read_text().splitlines()] == ["c1", "c2"]


def test_a_damaged_line_inside_the_file_is_an_error_naming_it(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps({**_ev(), "v": 1, "at": "x"}) + "\nnot json\n" + json.dumps({**_ev(), "v": 1}) + "\n")
    with pytest.raises(InvalidInputError, match="line 2"):
        load_state(path)


def test_events_are_validated(tmp_path):
    store = LabelStore(tmp_path / "l.jsonl")
    for bad in (_ev(grade=4), _ev(grade=True), _ev(labeler="<script>"), _ev(kind="delete"), _ev(chunk=""),
                {"kind": "note", "labeler": "a", "sample": "q1", "text": "x" * 5000}):
        with pytest.raises(ValueError):
            store.append(bad)
    store.close()
    assert (tmp_path / "l.jsonl").read_text() == ""


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


@pytest.mark.slow
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


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_labels_path_that_is_not_a_file_is_refused_at_once(tmp_path, kind, cli):
    """The trial: ``label --labels FIFO`` hung (the read waited for a writer)."""
    path = tmp_path / "labels.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(InvalidInputError, match="is not a regular file"):
        load_state(path)
    with pytest.raises(InvalidInputError, match="is not a regular file"):
        LabelStore(path)
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q1", "question": "first?", "retrieved": ["c1"]}\n')
    r = cli("label", data, "--labels", path, "--agreement")
    assert r.exit_code == 2 and "is not a regular file" in r.output and "Traceback" not in r.output
