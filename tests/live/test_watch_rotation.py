"""Issue 29, items 1 and 2: ``watch`` across log rotation, and a request the scorer refuses.

Every test writes a log, rotates it the way logrotate does (``copytruncate``: copy, then
truncate in place; ``create``: rename, then a new file), and checks by request id that every
request written is scored exactly once, and that the rotation is said in the notes.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.live.watch import Watcher
from tests import live_judge


def _watcher(tmp_path: Path, log: Path, **kw) -> Watcher:
    return Watcher(str(log), Judge(ScriptedBackend(live_judge.scripted)), tmp_path / "state", **kw)


def _append(log: Path, ids) -> None:
    with open(log, "a") as f:
        f.write("".join(live_judge.request_line(i) for i in ids))


def _drain(w: Watcher) -> None:
    w.poll()
    while w.pending:
        w.poll()


def _scored(tmp_path: Path) -> list[str]:
    path = tmp_path / "state" / "scored.jsonl"
    return [json.loads(line)["id"] for line in path.read_text().splitlines()] if path.exists() else []


def _once(ids: list[str], n: int) -> None:
    assert len(ids) == len(set(ids)), "a request was scored twice"
    want = {f"r{i}" for i in range(n)}
    assert sorted(ids) == sorted(want), f"lost: {sorted(want - set(ids))}"


def test_copytruncate_reads_the_copy_then_the_new_start(tmp_path):
    """The issue's repro: truncated to 0 (the stored offset past the new end) and 5 appended: 0 scored."""
    log = tmp_path / "req.jsonl"
    _append(log, range(19))
    w = _watcher(tmp_path, log)
    _drain(w)
    _append(log, range(19, 24))  # written after the last poll, before the rotation
    shutil.copyfile(log, str(log) + ".1")
    with open(log, "r+") as f:
        f.truncate(0)
    _append(log, range(24, 29))
    _drain(w)
    _once(_scored(tmp_path), 29)
    notes = " | ".join(w.notes)
    assert "was truncated" in notes and "req.jsonl.1" in notes


def test_rename_and_recreate_reads_the_old_file_to_its_end_then_the_new(tmp_path):
    """The issue's repro: ``mv log log.1`` and a new log of 30 lines: the new file was read from the
    old offset, mid-line."""
    log = tmp_path / "req.jsonl"
    _append(log, range(24))
    w = _watcher(tmp_path, log)
    _drain(w)
    os.rename(log, str(log) + ".1")
    _append(Path(str(log) + ".1"), range(24, 30))  # the app still writes to the old file until it reopens
    _append(log, range(30, 60))
    _drain(w)
    _append(Path(str(log) + ".1"), range(60, 62))  # a late write to the renamed file is still read
    _append(log, range(62, 64))
    _drain(w)
    _once(_scored(tmp_path), 64)
    assert any("was replaced by another file" in n for n in w.notes)


def test_a_restart_after_each_rotation_resumes_exactly(tmp_path):
    """The state is keyed by inode: a watcher that was down during the rotation finds the renamed
    file by inode (and a copy by its content) and reads only what it had not read."""
    log = tmp_path / "req.jsonl"
    _append(log, range(10))
    _drain(_watcher(tmp_path, log))
    _append(log, range(10, 15))
    os.rename(log, str(log) + ".1")
    _append(log, range(15, 25))
    second = _watcher(tmp_path, log)
    assert any("rotated while no watcher ran" in n for n in second.notes)
    _drain(second)
    _append(log, range(25, 30))
    shutil.copyfile(log, str(log) + ".2")
    with open(log, "r+") as f:
        f.truncate(0)
    _append(log, range(30, 33))
    third = _watcher(tmp_path, log)
    assert any("truncated or rewritten while no watcher ran" in n for n in third.notes)
    _drain(third)
    _once(_scored(tmp_path), 33)
    assert third.counts["duplicates"] == 0, "a restart re-read what it had scored"


def test_truncated_and_regrown_past_the_offset_is_noticed(tmp_path):
    """A size at or past the offset is no proof: the bytes before the offset must still be the ones read."""
    log = tmp_path / "req.jsonl"
    _append(log, range(5))
    w = _watcher(tmp_path, log)
    _drain(w)
    with open(log, "w") as f:  # truncated, then more written than there was
        f.write("".join(live_judge.request_line(i, answer="ok" + "!" * 30) for i in range(5, 15)))
    _drain(w)
    _once(_scored(tmp_path), 15)
    assert any("was truncated" in n for n in w.notes)


def test_half_lines_wait_and_a_rotated_file_left_unfinished_is_quarantined_once(tmp_path):
    log = tmp_path / "req.jsonl"
    _append(log, range(3))
    line = live_judge.request_line(3)
    with open(log, "a") as f:
        f.write(line[:25])
    w = _watcher(tmp_path, log)
    _drain(w)
    assert sorted(_scored(tmp_path)) == ["r0", "r1", "r2"] and w.counts["malformed"] == 0
    with open(log, "a") as f:
        f.write(line[25:] + '{"request_id": "never-finished", "question": "q')
    _drain(w)
    assert "r3" in _scored(tmp_path)
    os.rename(log, str(log) + ".1")
    _append(log, range(4, 6))
    w.tail.linger = 0.0  # the renamed file has stopped changing: its unfinished line is given up
    _drain(w)
    _drain(w)
    _once(_scored(tmp_path), 6)
    quarantine = [json.loads(x) for x in (tmp_path / "state" / "quarantine.jsonl").read_text().splitlines()]
    assert len(quarantine) == 1 and quarantine[0]["text"].startswith('{"request_id": "never-finished"')
    assert quarantine[0]["reason"].startswith("unfinished last line of a rotated log")
    assert len(w.tail.files) == 1, "the rotated file read to its end is let go"


def test_bad_lines_at_the_same_offset_of_two_files_are_both_quarantined(tmp_path):
    log = tmp_path / "req.jsonl"
    log.write_text("{not json\n")
    w = _watcher(tmp_path, log)
    _drain(w)
    os.rename(log, str(log) + ".1")
    log.write_text("{not json either\n")
    _drain(w)
    quarantine = (tmp_path / "state" / "quarantine.jsonl").read_text().splitlines()
    assert len(quarantine) == 2 and len({json.loads(q)["file"] for q in quarantine}) == 2


def test_a_state_from_before_inodes_is_resumed(tmp_path):
    log = tmp_path / "req.jsonl"
    _append(log, range(4))
    size = log.stat().st_size
    _append(log, range(4, 6))
    state = tmp_path / "state"
    state.mkdir()
    (state / "offset.json").write_text(json.dumps({"offset": size, "line": 4}))
    w = _watcher(tmp_path, log)
    _drain(w)
    assert sorted(_scored(tmp_path)) == ["r4", "r5"]
    assert json.loads((state / "offset.json").read_text())["offset"] == log.stat().st_size


def test_a_chunk_without_text_is_one_quarantined_line(tmp_path):
    """Item 2: ``{"retrieved": [{"id": "c7"}]}`` or ``[1, 2]`` stopped watch (exit 2) and the good
    lines around it were never scored."""
    log = tmp_path / "req.jsonl"
    _append(log, [0])
    with open(log, "a") as f:
        f.write(json.dumps({"request_id": "b1", "ts": 1, "question": "q?", "retrieved": [{"id": "c7"}],
                            "answer": "ok"}) + "\n")
        f.write(json.dumps({"request_id": "b2", "ts": 1, "question": "q?", "retrieved": [1, 2], "answer": "ok"}) + "\n")
    _append(log, [1])
    w = _watcher(tmp_path, log)
    _drain(w)
    _once(_scored(tmp_path), 2)
    quarantine = [json.loads(x) for x in (tmp_path / "state" / "quarantine.jsonl").read_text().splitlines()]
    assert [q["line"] for q in quarantine] == [2, 3]
    assert all("has no text" in q["reason"] for q in quarantine)
    _append(log, [2])  # the watcher goes on
    _drain(w)
    _once(_scored(tmp_path), 3)
