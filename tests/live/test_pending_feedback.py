"""Feedback waiting for its request: taken by request id, oldest first, and bounded (the oldest
stops waiting past the bound, counted); through the log-tailing watcher, a feedback line logged
before its request is joined when the request is scored."""

from __future__ import annotations

import json

from ragmeter.live.logger import RequestLogger
from ragmeter.live.pending_feedback import PendingFeedback
from ragmeter.live.watch import Watcher


def _fb(rid: str, offset: int, value: float = 1.0) -> dict:
    return {"id": rid, "ts": 0.0, "value": value, "joined": False, "file": "log", "offset": offset}


def test_feedback_is_taken_by_request_oldest_first():
    waiting = PendingFeedback()
    for rec in (_fb("r1", 0, 1.0), _fb("r2", 10), _fb("r1", 20, -1.0), _fb("r1", 20, -1.0)):  # the last: read again
        waiting.add(rec)
    assert len(waiting) == 3
    assert [f["value"] for f in waiting.take("r1")] == [1.0, -1.0]
    assert waiting.take("r1") == [] and len(waiting) == 1 and waiting.dropped == 0
    assert waiting.ids() == ["r2"]
    waiting.discard(("log", 10))  # written joined since: it waits no more
    waiting.discard(("log", 99))  # not waiting: nothing to do
    assert len(waiting) == 0 and waiting.ids() == [] and waiting.take("r2") == []


def test_past_the_bound_the_oldest_stops_waiting():
    waiting = PendingFeedback(limit=3)
    for i, rid in enumerate(["a", "b", "a", "c", "d"]):
        waiting.add(_fb(rid, i))
    assert len(waiting) == 3 and waiting.dropped == 2  # a@0 and b@1 went
    assert [f["offset"] for f in waiting.take("a")] == [2]
    assert waiting.take("b") == []
    assert [f["offset"] for f in waiting.take("c") + waiting.take("d")] == [3, 4]


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_feedback_line_logged_before_its_request_is_joined_later(tmp_path):
    log = tmp_path / "requests.jsonl"
    app = RequestLogger(str(log))
    app.feedback("r1", -1)  # the verdict reaches the log first
    app.feedback("elsewhere", 1)  # a request this log never holds: it waits, unjoined
    assert app.flush()
    w = Watcher(str(log), None, tmp_path / "state", metrics=("hit_rate@5",))
    assert w.poll() == 0
    assert [(f["id"], f["joined"]) for f in _lines(tmp_path / "state" / "feedback.jsonl")] == [("r1", False),
                                                                                              ("elsewhere", False)]
    app.log("How long is the warranty?", [{"id": "a", "text": "12 months."}], "12 months.", request_id="r1")
    assert app.flush()
    assert w.poll() == 1
    lines = _lines(tmp_path / "state" / "feedback.jsonl")
    assert [(f["id"], f["joined"], f.get("late")) for f in lines] == [("r1", False, None), ("elsewhere", False, None),
                                                                      ("r1", True, True)]
    assert w.recent[-1]["feedback"] == -1.0 and len(w.waiting) == 1


def test_a_note_says_when_feedback_stops_waiting(tmp_path):
    log = tmp_path / "requests.jsonl"
    app = RequestLogger(str(log))
    for i in range(3):
        app.feedback(f"r{i}", 1)
    assert app.flush()
    w = Watcher(str(log), None, tmp_path / "state", metrics=("hit_rate@5",))
    w.waiting.limit = 2
    w.poll()
    assert w.waiting.dropped == 1
    assert [n for n in w.notes if "no longer wait" in n] == [
        'more than 2 feedback records waited for requests not scored yet; the oldest no longer wait (they stay in '
        'feedback.jsonl with "joined": false)']


def test_a_join_lost_to_a_kill_is_written_on_restart(tmp_path):
    """Killed after the request's record was written and before its waiting feedback was written
    joined: the restart sees the request scored and writes the join."""
    log = tmp_path / "requests.jsonl"
    app = RequestLogger(str(log))
    app.feedback("r1", 1)
    assert app.flush()
    state = tmp_path / "state"
    w = Watcher(str(log), None, state, metrics=("hit_rate@5",))
    w.poll()
    app.log("q?", [{"id": "a", "text": "t"}], "a.", request_id="r1")
    assert app.flush()
    w.poll()
    w.close()
    feedback = state / "feedback.jsonl"
    first, late = feedback.read_text().splitlines()
    feedback.write_text(first + "\n")  # the late line never written
    again = Watcher(str(log), None, state, metrics=("hit_rate@5",))
    assert [(f["joined"], f.get("late")) for f in _lines(feedback)] == [(False, None), (True, True)]
    assert json.loads(late) == _lines(feedback)[1] and len(again.waiting) == 0
    assert again.recent[-1]["feedback"] == 1.0
    assert Watcher(str(log), None, state, metrics=("hit_rate@5",)).waiting.ids() == []  # and not twice
    assert len(_lines(feedback)) == 2
