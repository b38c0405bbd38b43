"""``ragmeter watch`` on a log that rotates (copytruncate, rename and recreate, truncation, a
restart after each): every request scored exactly once, half lines waiting for their end, and a
file left unfinished quarantined once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import live_judge

GARBAGE = [b"\x00\x01\x02\xff\xfe binary\n", b"\x89PNG\r\x1a\n", b'{"request_id": "bad", "ts": "yesterday"}\n']


class Life:
    def __init__(self, tmp: Path) -> None:
        self.log = tmp / "app.log"
        self.state = tmp / "state"
        self.next = 0
        self.garbage = 0

    def write(self, n: int, path: Path | None = None, split: bool = False) -> None:
        for _ in range(n):
            line = live_judge.request_line(self.next)
            self.next += 1
            with open(path or self.log, "a") as f:
                if split:  # a line written in two parts, the watcher polling in between
                    f.write(line[:30])
                    f.flush()
                    time.sleep(0.12)
                    f.write(line[30:])
                else:
                    f.write(line)

    def junk(self) -> None:
        with open(self.log, "ab") as f:
            for g in GARBAGE:
                f.write(g)
                self.garbage += 1

    def copytruncate(self) -> None:
        self._shift()
        shutil.copyfile(self.log, str(self.log) + ".1")
        with open(self.log, "r+b") as f:
            f.truncate(0)

    def rename(self) -> Path:
        self._shift()
        old = Path(str(self.log) + ".1")
        os.rename(self.log, old)
        return old

    def _shift(self) -> None:  # logrotate's numbering: .1 -> .2 -> ...
        for i in range(8, 0, -1):
            if Path(f"{self.log}.{i}").exists():
                os.rename(f"{self.log}.{i}", f"{self.log}.{i + 1}")

    def scored(self) -> list[str]:
        path = self.state / "scored.jsonl"
        if not path.exists():
            return []
        return [json.loads(line)["id"] for line in path.read_text().splitlines() if line.endswith("}")]

    def wait(self, proc: subprocess.Popen, timeout: float = 60) -> None:
        """Until the watcher has scored every request written so far."""
        deadline = time.monotonic() + timeout
        while len(set(self.scored())) < self.next:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else "the watcher exited"
            assert time.monotonic() < deadline, f"scored {len(set(self.scored()))} of {self.next}"
            time.sleep(0.05)


def _watch(life: Life, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ragmeter", "watch", str(life.log), "--judge", "none", "--state", str(life.state),
            "--port", "0", "--interval", "0.05", "--sample-rate", "1", *extra]


@pytest.mark.slow
def test_every_request_of_a_rotating_log_is_scored_exactly_once(tmp_path):
    life = Life(tmp_path)
    life.write(10)
    stderr_path = tmp_path / "watch1.err"
    with open(stderr_path, "w") as err:
        proc = subprocess.Popen(_watch(life, "--max-seconds", "300"), stdout=subprocess.DEVNULL, stderr=err)
    try:
        life.wait(proc)
        life.write(3, split=True)  # half lines, completed while the watcher polls
        life.junk()
        life.write(5)
        life.copytruncate()  # while the watcher runs: the 5 unread lines are in app.log.1 only
        life.write(8)
        life.wait(proc)
        old = life.rename()  # rename and recreate while it runs, the app writing on to the old file
        life.write(4, path=old)
        life.write(6)
        life.write(2, path=old)
        life.junk()
        life.write(4, split=True)
        life.wait(proc)
        life.write(5)
        os.kill(proc.pid, signal.SIGKILL)  # killed, some lines perhaps unread
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    first_err = stderr_path.read_text()
    assert "app.log was truncated" in first_err and "app.log was replaced by another file" in first_err
    # while no watcher runs: a copytruncate, more lines, a rename, a new file
    life.write(3)
    life.copytruncate()
    life.write(4)
    life.rename()
    life.write(6)
    with open(tmp_path / "watch2.err", "w") as err:
        proc = subprocess.Popen(_watch(life, "--max-seconds", "300"), stdout=subprocess.DEVNULL, stderr=err)
    try:
        life.wait(proc)
        life.write(5)
        life.copytruncate()
        life.write(2, split=True)
        life.wait(proc)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    second_err = (tmp_path / "watch2.err").read_text()
    assert "while no watcher ran" in second_err, second_err
    done = subprocess.run(_watch(life, "--once"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in first_err + second_err + done.stderr
    ids = life.scored()
    assert len(ids) == len(set(ids)), "a request was scored twice"
    assert sorted(ids) == sorted(f"r{i}" for i in range(life.next)), "a request was lost"
    quarantine = [json.loads(line) for line in (life.state / "quarantine.jsonl").read_text().splitlines()]
    assert len(quarantine) == life.garbage, [q["text"][:40] for q in quarantine]


def test_copytruncate_reads_the_copy_then_the_new_start(tmp_path):
    """The issue's repro: truncated to 0 (the stored offset past the new end) and 5 appended: 0 scored."""
    log = tmp_path / "req.jsonl"
    live_judge.append_requests(log, range(19))
    w = live_judge.watcher(tmp_path, log)
    live_judge.drain(w)
    live_judge.append_requests(log, range(19, 24))  # written after the last poll, before the rotation
    shutil.copyfile(log, str(log) + ".1")
    with open(log, "r+") as f:
        f.truncate(0)
    live_judge.append_requests(log, range(24, 29))
    live_judge.drain(w)
    live_judge.assert_each_once(live_judge.scored_ids(tmp_path), 29)
    notes = " | ".join(w.notes)
    assert "was truncated" in notes and "req.jsonl.1" in notes


def test_rename_and_recreate_reads_the_old_file_to_its_end_then_the_new(tmp_path):
    """The issue's repro: ``mv log log.1`` and a new log of 30 lines: the new file was read from the
    old offset, mid-line."""
    log = tmp_path / "req.jsonl"
    live_judge.append_requests(log, range(24))
    w = live_judge.watcher(tmp_path, log)
    live_judge.drain(w)
    os.rename(log, str(log) + ".1")
    # the app still writes to the old file until it reopens
    live_judge.append_requests(Path(str(log) + ".1"), range(24, 30))
    live_judge.append_requests(log, range(30, 60))
    live_judge.drain(w)
    live_judge.append_requests(Path(str(log) + ".1"), range(60, 62))  # a late write to the renamed file is still read
    live_judge.append_requests(log, range(62, 64))
    live_judge.drain(w)
    live_judge.assert_each_once(live_judge.scored_ids(tmp_path), 64)
    assert any("was replaced by another file" in n for n in w.notes)


def test_a_restart_after_each_rotation_resumes_exactly(tmp_path):
    """The state is keyed by inode: a watcher that was down during the rotation finds the renamed
    file by inode (and a copy by its content) and reads only what it had not read."""
    log = tmp_path / "req.jsonl"
    live_judge.append_requests(log, range(10))
    live_judge.drain(live_judge.watcher(tmp_path, log))
    live_judge.append_requests(log, range(10, 15))
    os.rename(log, str(log) + ".1")
    live_judge.append_requests(log, range(15, 25))
    second = live_judge.watcher(tmp_path, log)
    assert any("rotated while no watcher ran" in n for n in second.notes)
    live_judge.drain(second)
    live_judge.append_requests(log, range(25, 30))
    shutil.copyfile(log, str(log) + ".2")
    with open(log, "r+") as f:
        f.truncate(0)
    live_judge.append_requests(log, range(30, 33))
    third = live_judge.watcher(tmp_path, log)
    assert any("truncated or rewritten while no watcher ran" in n for n in third.notes)
    live_judge.drain(third)
    live_judge.assert_each_once(live_judge.scored_ids(tmp_path), 33)
    assert third.counts["duplicates"] == 0, "a restart re-read what it had scored"


def test_truncated_and_regrown_past_the_offset_is_noticed(tmp_path):
    """A size at or past the offset is no proof: the bytes before the offset must still be the ones read."""
    log = tmp_path / "req.jsonl"
    live_judge.append_requests(log, range(5))
    w = live_judge.watcher(tmp_path, log)
    live_judge.drain(w)
    with open(log, "w") as f:  # truncated, then more written than there was
        f.write("".join(live_judge.request_line(i, answer="ok" + "!" * 30) for i in range(5, 15)))
    live_judge.drain(w)
    live_judge.assert_each_once(live_judge.scored_ids(tmp_path), 15)
    assert any("was truncated" in n for n in w.notes)


def test_half_lines_wait_and_a_rotated_file_left_unfinished_is_quarantined_once(tmp_path):
    log = tmp_path / "req.jsonl"
    live_judge.append_requests(log, range(3))
    line = live_judge.request_line(3)
    with open(log, "a") as f:
        f.write(line[:25])
    w = live_judge.watcher(tmp_path, log)
    live_judge.drain(w)
    assert sorted(live_judge.scored_ids(tmp_path)) == ["r0", "r1", "r2"] and w.counts["malformed"] == 0
    with open(log, "a") as f:
        f.write(line[25:] + '{"request_id": "never-finished", "question": "q')
    live_judge.drain(w)
    assert "r3" in live_judge.scored_ids(tmp_path)
    os.rename(log, str(log) + ".1")
    live_judge.append_requests(log, range(4, 6))
    w.tail.linger = 0.0  # the renamed file has stopped changing: its unfinished line is given up
    live_judge.drain(w)
    live_judge.drain(w)
    live_judge.assert_each_once(live_judge.scored_ids(tmp_path), 6)
    quarantine = [json.loads(x) for x in (tmp_path / "state" / "quarantine.jsonl").read_text().splitlines()]
    assert len(quarantine) == 1 and quarantine[0]["text"].startswith('{"request_id": "never-finished"')
    assert quarantine[0]["reason"].startswith("unfinished last line of a rotated log")
    assert len(w.tail.files) == 1, "the rotated file read to its end is let go"


def test_bad_lines_at_the_same_offset_of_two_files_are_both_quarantined(tmp_path):
    log = tmp_path / "req.jsonl"
    log.write_text("{not json\n")
    w = live_judge.watcher(tmp_path, log)
    live_judge.drain(w)
    os.rename(log, str(log) + ".1")
    log.write_text("{not json either\n")
    live_judge.drain(w)
    quarantine = (tmp_path / "state" / "quarantine.jsonl").read_text().splitlines()
    assert len(quarantine) == 2 and len({json.loads(q)["file"] for q in quarantine}) == 2


def test_a_state_from_before_inodes_is_resumed(tmp_path):
    log = tmp_path / "req.jsonl"
    live_judge.append_requests(log, range(4))
    size = log.stat().st_size
    live_judge.append_requests(log, range(4, 6))
    state = tmp_path / "state"
    state.mkdir()
    (state / "offset.json").write_text(json.dumps({"offset": size, "line": 4}))
    w = live_judge.watcher(tmp_path, log)
    live_judge.drain(w)
    assert sorted(live_judge.scored_ids(tmp_path)) == ["r4", "r5"]
    assert json.loads((state / "offset.json").read_text())["offset"] == log.stat().st_size
