"""The scripted life of a production log under ``ragmeter watch`` (issue 29, item 1's proof).

One ``watch`` process runs on while the log is appended to (whole lines, and lines written in
two parts), rotated by ``copytruncate`` and by rename-and-recreate (the app writing on to the
renamed file a while), fed binary garbage; then the watcher is killed -9, the log rotated both
ways while it is down, and a new watcher started. Every request written is scored exactly once
(counted by request id), every garbage line is quarantined, and the rotations are said on stderr.
"""

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
