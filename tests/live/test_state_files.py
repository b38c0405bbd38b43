"""``live/state_files.py``: the watcher's JSON-lines state files survive a kill mid-write: a torn
last line is cut off the file, a damaged line skipped, and both are said."""

from __future__ import annotations

import json

from ragmeter.live.state_files import append_records, read_records


def _valid(rec: dict) -> bool:
    return isinstance(rec.get("id"), str)


def test_records_appended_are_read_back_in_order(tmp_path):
    path = tmp_path / "scored.jsonl"
    append_records(path, [{"id": "a", "text": "é"}, {"id": "b"}])
    append_records(path, [{"id": "c"}])
    notes: list[str] = []
    assert [r["id"] for r in read_records(path, notes, _valid)] == ["a", "b", "c"] and notes == []
    assert "é" in path.read_text(encoding="utf-8")  # written as text, not \\u escapes
    assert read_records(tmp_path / "none.jsonl", notes, _valid) == []


def test_a_torn_last_line_is_cut_off_and_a_damaged_one_skipped(tmp_path):
    path = tmp_path / "scored.jsonl"
    good = json.dumps({"id": "a"}) + "\n"
    torn = '{"id": "tor'
    path.write_text(good + "{not json\n" + json.dumps({"no": "id"}) + "\n" + good + torn)
    notes: list[str] = []
    assert [r["id"] for r in read_records(path, notes, _valid)] == ["a", "a"]
    assert path.read_text() == good + "{not json\n" + json.dumps({"no": "id"}) + "\n" + good  # the torn tail gone
    assert len(notes) == 2 and f"trimmed a torn last line ({len(torn)} bytes)" in notes[0]
    assert notes[1].endswith("skipped 2 damaged line(s)")
    append_records(path, [{"id": "b"}])  # the next write starts on a line of its own
    assert [r["id"] for r in read_records(path, [], _valid)] == ["a", "a", "b"]
