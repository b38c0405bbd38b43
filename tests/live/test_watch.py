"""Issue 17, item 1: ``ragmeter watch`` never halts on a bad line or a torn state file.

Bad lines (invalid JSON, ``"ts": "yesterday"``, an answer that is a number, a context of
numbers, a span without an id, a torn line merged with the next) go to ``quarantine.jsonl``
with their offset, line number and reason, are counted, and the offset moves past them; a
restart neither crashes on them nor quarantines them twice. A kill -9 loop (>= 20 kills at
random points while the log grows) leaves every good request scored exactly once and every
bad line quarantined exactly once.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.live.alerts import Alert
from ragmeter.live.loop import summary_line
from ragmeter.live.prometheus import serve
from ragmeter.live.watch import Watcher
from tests import judge_server, live_judge

BAD_LINES = [
    '{"request_id": "b1", "ts": "yesterday", "question": "q?", "answer": "ok"}',
    '{"request_id": "b2", "ts": 1, "question": "q?", "answer": 42}',
    '{"request_id": "b3", "ts": 1, "question": "q?", "answer": "ok", "context": [1, 2, 3]}',
    '{"attributes": {"input.value": "q?", "output.value": "ok"}, "context": [1, 2]}',
    '{"attributes": {"input.value": 7, "output.value": "ok"}, "span_id": "s9"}',
    '{"request_id": "b4", "ts": 1, "question": "q?", "retrieved": "c1"}',
    '{not json',
    '[1, 2]',
    '{"request_id": "b5", "ts": 1e999, "question": "q?"}',
    '{"request_id": "b6", "question": "' + "\\ud800" + '"}',
    '{"request_id": "b7", "metadata": ' + "[" * 50_000 + '}',
]


def _watcher(tmp_path, log, **kw):
    return Watcher(str(log), Judge(ScriptedBackend(live_judge.scripted)), tmp_path / "state", **kw)


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def test_bad_lines_are_quarantined_counted_and_passed(tmp_path):
    log = tmp_path / "req.jsonl"
    with open(log, "w") as f:
        for i, bad in enumerate(BAD_LINES):
            f.write(live_judge.request_line(i))
            f.write(bad + "\n")
    with open(log, "ab") as fb:
        fb.write(b"\xff\xfe not utf-8\n")
    with open(log, "a") as f:
        f.write('{"request_id": "torn", "question": "cut' + live_judge.request_line(100))  # writer died mid-line
        f.write(live_judge.request_line(101))
    w = _watcher(tmp_path, log)
    while True:
        w.poll()
        if not w.pending:
            break
    good = [f"r{i}" for i in range(len(BAD_LINES))] + ["r101"]
    state = tmp_path / "state"
    assert sorted(_ids(state / "scored.jsonl")) == sorted(good)
    quarantine = [json.loads(line) for line in (state / "quarantine.jsonl").read_text().splitlines()]
    assert len(quarantine) == w.counts["malformed"] == len(BAD_LINES) + 2
    lines = log.read_bytes().split(b"\n")
    for q in quarantine:  # offset and line number point at the line itself
        assert log.read_bytes()[q["offset"]:].split(b"\n", 1)[0] == lines[q["line"] - 1]
        assert q["reason"] and isinstance(q["text"], str)
    reasons = " | ".join(q["reason"] for q in quarantine)
    for words in ('field "ts": must be seconds since the epoch', 'field "answer": must be a string',
                  'field "context": must be a list of strings', "a span needs a span_id", "input.value must be",
                  "not valid JSON", "must be a JSON object", "lone UTF-16 surrogate", "nested too deeply",
                  "not valid UTF-8", 'field "retrieved"', "must be a finite number"):
        assert words in reasons, words
    assert json.loads((state / "offset.json").read_text())["offset"] == log.stat().st_size
    assert "malformed (quarantined in" in summary_line(w)
    # a restart that re-reads everything (offset lost) scores nothing twice, quarantines nothing twice
    (state / "offset.json").unlink()
    again = _watcher(tmp_path, log)
    again.poll()
    while again.pending:
        again.poll()
    assert sorted(_ids(state / "scored.jsonl")) == sorted(good)
    assert len((state / "quarantine.jsonl").read_text().splitlines()) == len(quarantine)


def test_torn_and_damaged_state_files_are_recovered(tmp_path):
    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i) for i in range(6)))
    first = _watcher(tmp_path, log)
    first.poll()
    state = tmp_path / "state"
    scored = (state / "scored.jsonl").read_text().splitlines()
    # a kill mid-append: the last record torn; and a torn offset file
    (state / "scored.jsonl").write_text("\n".join(scored[:4]) + "\n" + scored[4][:17])
    (state / "offset.json").write_text('{"offs')
    (state / "quarantine.jsonl").write_text('{"offset": 3, "line": 1, "rea')
    second = _watcher(tmp_path, log)
    notes = " | ".join(second.notes)
    assert "trimmed a torn last line" in notes and "offset.json is damaged" in notes
    second.poll()
    assert sorted(_ids(state / "scored.jsonl")) == sorted(f"r{i}" for i in range(6))
    assert second.counts["duplicates"] == 4 and second.counts["scored"] == 2
    assert (state / "quarantine.jsonl").read_text() == ""


def test_alert_command_gets_the_environment_and_a_missing_one_is_reported(tmp_path, monkeypatch):
    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i, answer="wrong") for i in range(3)))
    marker = tmp_path / "alert.txt"
    script = tmp_path / "bin" / "notify-me"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\necho \"$RAGMETER_ALERT|$HOME_MARK\" >> {marker}\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME_MARK", "kept")
    w = _watcher(tmp_path, log, alerts=[Alert("faithfulness", below=0.8)], alert_command="notify-me")
    w.poll()  # found on the user's PATH, with the user's variables
    assert marker.read_text() == "faithfulness rolling mean 0.000 is below 0.8|kept\n"
    gone = _watcher(tmp_path / "other", log, alerts=[Alert("faithfulness", below=0.8)],
                    alert_command="no-such-command-anywhere --now")
    gone.poll()
    assert gone.fired and any("alert command could not run" in n for n in gone.notes)
    with open(log, "a") as f:
        f.write(live_judge.request_line(50))
    gone.poll()  # still watching


def _writer(log: Path, chunks: list[str], stop: threading.Event) -> None:
    for chunk in chunks:
        if stop.is_set():
            return
        with open(log, "a") as f:
            f.write(chunk)
        time.sleep(0.25)


@pytest.mark.slow
def test_kill_9_loop_while_the_log_grows(tmp_path):
    rng = random.Random(17)
    srv, state = judge_server.start(live_judge.over_http)
    state.delay = 0.01
    log = tmp_path / "req.jsonl"
    chunks, good, bad = [], [], 0
    for i in range(160):
        chunks.append(live_judge.request_line(i))
        if i != 78:
            good.append(f"r{i}")
        if i % 9 == 4:
            chunks.append(BAD_LINES[(i // 9) % len(BAD_LINES)] + "\n")
            bad += 1
        if i == 77:  # a torn line: the writer died mid-record, the next record lands on it
            chunks.append('{"request_id": "torn", "question": "cu')
            bad += 1
    log.write_text("")
    cmd = [sys.executable, "-m", "ragmeter", "watch", str(log), "--judge", "openai:m", "--judge-base-url",
           state.url + "/v1", "--state", str(tmp_path / "state"), "--port", "0", "--interval", "0.02"]
    env = {**os.environ, "OPENAI_API_KEY": "k"}
    stop = threading.Event()
    writer = threading.Thread(target=_writer, args=(log, chunks, stop))
    writer.start()
    kills = 0
    progress: list[int] = []  # scored records at each kill
    scored_file = tmp_path / "state" / "scored.jsonl"

    def scored_now() -> int:
        return len(scored_file.read_bytes().split(b"\n")) - 1 if scored_file.exists() else 0

    try:
        while kills < 22:
            # where the kill lands is chosen by what the process has done, not by a guess at how long its
            # start-up takes on this machine: in its start-up, just after a judge request of its own reached
            # the server (a call in flight), or just after it wrote a scored record (between batches).
            # The last two only while something is left to score; each wait ends by its 50 s bound,
            # before the process's own --max-seconds 60
            left = writer.is_alive() or scored_now() < len(good)
            moment = rng.choice(["start-up", "request", "scored"]) if left else "start-up"
            requests_before, scored_before = state.count, scored_now()
            proc = subprocess.Popen(cmd + ["--max-seconds", "60"], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
            deadline = time.monotonic() + 50
            if moment == "start-up":
                time.sleep(rng.uniform(0, 1.5))
            else:
                while time.monotonic() < deadline and proc.poll() is None and (
                        state.count == requests_before if moment == "request" else scored_now() == scored_before):
                    time.sleep(0.005)
                time.sleep(rng.uniform(0, 0.05))
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stderr.close()
            kills += 1
            progress.append(scored_now())
        writer.join()
        quarantine = tmp_path / "state" / "quarantine.jsonl"
        left_for_last = quarantine.read_text().count("\n") if quarantine.exists() else 0
        done = subprocess.run(cmd + ["--once"], env=env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
    finally:
        stop.set()
        writer.join()
        srv.shutdown()
    st = tmp_path / "state"
    ids = _ids(st / "scored.jsonl")
    assert len(ids) == len(set(ids)), "a request was scored twice"
    assert sorted(ids) == sorted(good), "a request was lost"
    offsets = [json.loads(line)["offset"] for line in (st / "quarantine.jsonl").read_text().splitlines()]
    assert len(offsets) == len(set(offsets)) == bad
    assert json.loads((st / "offset.json").read_text())["offset"] == log.stat().st_size
    # the last process says what it quarantined when the killed ones left it bad lines (it may also re-read
    # one a killed process quarantined before saving its offset, and say so)
    assert "Traceback" not in done.stderr
    assert len(offsets) == left_for_last or "malformed (quarantined in" in done.stderr, done.stderr
    assert len({p for p in progress if 0 < p < len(good)}) >= 5, progress  # the kills landed mid-run


HERE = Path(__file__).parent.parent


def watcher(tmp_path, log, **kw):
    return Watcher(str(log), Judge(ScriptedBackend(live_judge.scripted)), tmp_path / "state", **kw)


def test_watch_scores_while_a_writer_appends_and_serves_metrics(tmp_path):
    log = tmp_path / "req.jsonl"
    writer = subprocess.Popen([sys.executable, str(HERE / "watch_writer.py"), str(log), "40", "0.01"])
    registry = CollectorRegistry()
    w = watcher(tmp_path, log, window=25, registry=registry)
    server = serve(registry, "127.0.0.1", 0)
    try:
        while writer.poll() is None:
            w.poll()
            time.sleep(0.05)
        w.poll()
        # a poll scores at most w.batch requests: what a slow poller left behind the writer is read in
        # the polls that follow, until none is pending (bounded: 44 lines are 3 batches at most)
        for _ in range(10):
            if not w.pending:
                break
            w.poll()
        assert w.counts["scored"] == 40 and w.counts["malformed"] == 4
        scored = [json.loads(line)["id"] for line in (tmp_path / "state" / "scored.jsonl").read_text().splitlines()]
        assert sorted(scored) == sorted(f"r{i}" for i in range(40))
        summary = w.window_summary()
        assert summary["faithfulness"] == {"mean": 1.0, "scored": 25, "not_computed": 0, "failed": 0, "reasons": {}}
        text = urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/metrics", timeout=5).read().decode()
        samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                   for fam in text_string_to_metric_families(text) for s in fam.samples}
        assert samples[("ragmeter_rolling_mean", (("metric", "faithfulness"), ("window", "last_n")))] == 1.0
        assert samples[("ragmeter_log_lines", (("outcome", "malformed"),))] == 4
        # 40 extractions (the questions differ); the 40 verifications ask the same thing
        # (same claim, same evidence), so the ledger answers 39 of them without a call
        assert samples[("ragmeter_judge_calls", ())] == 41
    finally:
        server.shutdown()


def test_restart_resumes_from_the_offset_without_rescoring(tmp_path):
    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i) for i in range(10)))
    first = watcher(tmp_path, log)
    first.poll()
    with open(log, "a") as f:
        f.write("".join(live_judge.request_line(i) for i in range(10, 15)))
        f.write(live_judge.request_line(3))  # a duplicate request id
        f.write('{"request_id": "partial", "question": "cut')  # no newline yet: not read
    second = watcher(tmp_path, log)
    assert second.poll() == 5 and second.counts["duplicates"] == 1
    ids = [json.loads(line)["id"] for line in (tmp_path / "state" / "scored.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 15


@pytest.mark.slow
def test_kill_9_mid_run_loses_and_duplicates_nothing(tmp_path):
    srv, state = judge_server.start(live_judge.over_http)
    state.delay = 0.1
    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i) for i in range(60)))
    cmd = [sys.executable, "-m", "ragmeter", "watch", str(log), "--judge", "openai:m", "--judge-base-url",
           state.url + "/v1", "--state", str(tmp_path / "state"), "--port", "0", "--interval", "0.05"]
    env = {**os.environ, "OPENAI_API_KEY": "k"}
    try:
        proc = subprocess.Popen(cmd + ["--max-seconds", "60"], env=env, stderr=subprocess.DEVNULL)
        scored = tmp_path / "state" / "scored.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not scored.exists() or len(scored.read_text().splitlines()) < 16):
            assert proc.poll() is None, "the watcher exited early"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        at_kill = len(scored.read_text().splitlines())
        assert 16 <= at_kill < 60, "the kill must land mid-run"
        done = subprocess.run(cmd + ["--once"], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        ids = [json.loads(line)["id"] for line in (tmp_path / "state" / "scored.jsonl").read_text().splitlines()]
        assert len(ids) == len(set(ids)) == 60
    finally:
        srv.shutdown()


def test_threshold_alert_runs_the_command_once_per_crossing(tmp_path):
    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i, answer="wrong") for i in range(5)))
    marker = tmp_path / "alerts.txt"
    w = watcher(tmp_path, log, alerts=[Alert("faithfulness", below=0.8)],
                alert_command=f"{sys.executable} -c \"import os; "
                              f"open({str(marker)!r}, 'a').write(os.environ['RAGMETER_ALERT'] + chr(10))\"")
    w.poll()
    assert w.fired == ["faithfulness rolling mean 0.000 is below 0.8"]
    with open(log, "a") as f:
        f.write(live_judge.request_line(99, answer="wrong"))
    w.poll()
    assert w.fired == [] and marker.read_text().count("below 0.8") == 1  # still firing: not repeated


def test_drift_from_a_baseline_alerts(tmp_path):
    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i, answer="ok" if i % 4 == 0 else "no") for i in range(40)))
    w = watcher(tmp_path, log, alerts=[Alert("faithfulness", baseline=[1.0] * 30 + [0.0] * 2, max_drop=0.1)])
    w.poll()
    assert w.fired and "dropped" in w.fired[0] and "significant" in w.fired[0]


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


@pytest.mark.slow
def test_an_unterminated_huge_line_is_never_held_whole_nor_copied_whole(tmp_path):
    """The trial: a 500 MB sparse file with no newline took 1.1 GB, and each bad line was copied
    whole into the quarantine file. Here a 256 MB line (sparse: no disk), then a request."""
    import tracemalloc

    from ragmeter.live import watch as watch_module
    from ragmeter.live.tail import MAX_LINE

    log = tmp_path / "req.jsonl"
    with open(log, "wb") as f:
        f.write(b'{"request_id": "huge", "question": "')
        f.truncate(256 << 20)  # a hole of NULs, no newline
        f.seek(0, 2)
        f.write(b'"}\n' + live_judge.request_line(1).encode())
        f.write(b"not json " * 2000 + b"\n")  # an 18 KB bad line
    w = _watcher(tmp_path, log)
    tracemalloc.start()
    try:
        for _ in range(200):
            w.poll()
            if not w.pending:
                break
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_LINE, peak  # the whole line was held: 256 MB and more
    assert _ids(tmp_path / "state" / "scored.jsonl") == ["r1"]
    quarantine = [json.loads(line) for line in (tmp_path / "state" / "quarantine.jsonl").read_text().splitlines()]
    assert [q["line"] for q in quarantine] == [1, 3] and w.counts["malformed"] == 2 and w.counts["lines"] == 3
    assert "longer than 16 MB" in quarantine[0]["reason"]
    assert all(len(q["text"]) <= watch_module.QUARANTINE_TEXT for q in quarantine) and quarantine[1]["bytes"] == 18001


def test_the_alert_command_runs_without_a_shell_and_a_shell_line_is_given_as_the_help_says(tmp_path):
    """The help suggested $RAGMETER_ALERT without saying that nothing on the line is expanded."""
    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i, answer="wrong") for i in range(3)))
    literal, shell = tmp_path / "literal.txt", tmp_path / "shell.txt"
    plain = watcher(tmp_path / "a", log, alerts=[Alert("faithfulness", below=0.8)],
                    alert_command=f"{sys.executable} -c \"import sys; open({str(literal)!r}, 'w').write(sys.argv[1])\" "
                                  "$RAGMETER_ALERT")
    plain.poll()
    assert literal.read_text() == "$RAGMETER_ALERT"  # no shell: nothing expanded
    lined = watcher(tmp_path / "b", log, alerts=[Alert("faithfulness", below=0.8)],
                    alert_command=f"sh -c \"printf '%s' \\\"$RAGMETER_ALERT\\\" > {shell}\"")
    lined.poll()
    assert shell.read_text() == "faithfulness rolling mean 0.000 is below 0.8"
