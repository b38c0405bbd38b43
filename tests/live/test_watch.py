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

from ragmeter.live.alerts import Alert
from ragmeter.live.loop import summary_line
from ragmeter.live.prometheus import serve
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
    w = live_judge.watcher(tmp_path, log)
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
    again = live_judge.watcher(tmp_path, log)
    again.poll()
    while again.pending:
        again.poll()
    assert sorted(_ids(state / "scored.jsonl")) == sorted(good)
    assert len((state / "quarantine.jsonl").read_text().splitlines()) == len(quarantine)


def test_torn_and_damaged_state_files_are_recovered(tmp_path):
    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i) for i in range(6)))
    first = live_judge.watcher(tmp_path, log)
    first.poll()
    state = tmp_path / "state"
    scored = (state / "scored.jsonl").read_text().splitlines()
    # a kill mid-append: the last record torn; and a torn offset file
    (state / "scored.jsonl").write_text("\n".join(scored[:4]) + "\n" + scored[4][:17])
    (state / "offset.json").write_text('{"offs')
    (state / "quarantine.jsonl").write_text('{"offset": 3, "line": 1, "rea')
    second = live_judge.watcher(tmp_path, log)
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
    w = live_judge.watcher(tmp_path, log, alerts=[Alert("faithfulness", below=0.8)], alert_command="notify-me")
    w.poll()  # found on the user's PATH, with the user's variables
    assert marker.read_text() == "faithfulness rolling mean 0.000 is below 0.8|kept\n"
    gone = live_judge.watcher(tmp_path / "other", log, alerts=[Alert("faithfulness", below=0.8)],
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


def test_watch_scores_while_a_writer_appends_and_serves_metrics(tmp_path):
    log = tmp_path / "req.jsonl"
    writer = subprocess.Popen([sys.executable, str(HERE / "watch_writer.py"), str(log), "40", "0.01"])
    registry = CollectorRegistry()
    w = live_judge.watcher(tmp_path, log, window=25, registry=registry)
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
    first = live_judge.watcher(tmp_path, log)
    first.poll()
    with open(log, "a") as f:
        f.write("".join(live_judge.request_line(i) for i in range(10, 15)))
        f.write(live_judge.request_line(3))  # a duplicate request id
        f.write('{"request_id": "partial", "question": "cut')  # no newline yet: not read
    second = live_judge.watcher(tmp_path, log)
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
    w = live_judge.watcher(tmp_path, log, alerts=[Alert("faithfulness", below=0.8)],
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
    w = live_judge.watcher(tmp_path, log, alerts=[Alert("faithfulness", baseline=[1.0] * 30 + [0.0] * 2, max_drop=0.1)])
    w.poll()
    assert w.fired and "dropped" in w.fired[0] and "significant" in w.fired[0]


def test_a_chunk_without_text_is_one_quarantined_line(tmp_path):
    """Item 2: ``{"retrieved": [{"id": "c7"}]}`` or ``[1, 2]`` stopped watch (exit 2) and the good
    lines around it were never scored."""
    log = tmp_path / "req.jsonl"
    live_judge.append_requests(log, [0])
    with open(log, "a") as f:
        f.write(json.dumps({"request_id": "b1", "ts": 1, "question": "q?", "retrieved": [{"id": "c7"}],
                            "answer": "ok"}) + "\n")
        f.write(json.dumps({"request_id": "b2", "ts": 1, "question": "q?", "retrieved": [1, 2], "answer": "ok"}) + "\n")
    live_judge.append_requests(log, [1])
    w = live_judge.watcher(tmp_path, log)
    live_judge.drain(w)
    live_judge.assert_each_once(live_judge.scored_ids(tmp_path), 2)
    quarantine = [json.loads(x) for x in (tmp_path / "state" / "quarantine.jsonl").read_text().splitlines()]
    assert [q["line"] for q in quarantine] == [2, 3]
    assert all("has no text" in q["reason"] for q in quarantine)
    live_judge.append_requests(log, [2])  # the watcher goes on
    live_judge.drain(w)
    live_judge.assert_each_once(live_judge.scored_ids(tmp_path), 3)


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
    w = live_judge.watcher(tmp_path, log)
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
    plain = live_judge.watcher(tmp_path / "a", log, alerts=[Alert("faithfulness", below=0.8)],
                    alert_command=f"{sys.executable} -c \"import sys; open({str(literal)!r}, 'w').write(sys.argv[1])\" "
                                  "$RAGMETER_ALERT")
    plain.poll()
    assert literal.read_text() == "$RAGMETER_ALERT"  # no shell: nothing expanded
    lined = live_judge.watcher(tmp_path / "b", log, alerts=[Alert("faithfulness", below=0.8)],
                    alert_command=f"sh -c \"printf '%s' \\\"$RAGMETER_ALERT\\\" > {shell}\"")
    lined.poll()
    assert shell.read_text() == "faithfulness rolling mean 0.000 is below 0.8"
