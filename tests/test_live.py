"""Live traffic: the app hook, the watcher's windows, restart safety, Prometheus, alerts."""

from __future__ import annotations

import json
import os
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
from ragmeter.live.logger import RequestLogger
from ragmeter.live.watch import Alert, Watcher, kept, serve

from . import judge_server, live_judge

HERE = Path(__file__).parent


def test_log_request_is_thread_safe_and_well_formed(tmp_path):
    log = RequestLogger(str(tmp_path / "req.jsonl"))

    def worker(t):
        for i in range(200):
            assert log.log(f"q{t}-{i}", [{"id": "c", "text": "x"}, "d"], "a", request_id=f"{t}-{i}", user=object())
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert log.flush()
    rows = [json.loads(line) for line in (tmp_path / "req.jsonl").read_text().splitlines()]
    assert len(rows) == 1600 and len({r["request_id"] for r in rows}) == 1600
    assert rows[0]["retrieved"][1] == {"id": "d"} and log.dropped == log.errors == 0


def test_log_request_never_raises_and_counts_drops(tmp_path):
    class Stuck(RequestLogger):
        def _run(self):
            time.sleep(60)
    stuck = Stuck(str(tmp_path / "x.jsonl"), max_queue=3)
    results = [stuck.log("q") for _ in range(10)]
    assert results.count(True) == 3 and stuck.dropped == 7
    broken = RequestLogger(str(tmp_path / "no" / "such" / "dir" / "x.jsonl"))
    assert broken.log("q") is True and broken.flush() and broken.errors == 1


def test_sampling_is_deterministic():
    ids = [f"r{i}" for i in range(2000)]
    first = [i for i in ids if kept(i, 0.3)]
    assert first == [i for i in ids if kept(i, 0.3)] and 500 < len(first) < 700


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


def test_exit_on_alert_cli(tmp_path, monkeypatch):
    log = tmp_path / "req.jsonl"
    log.write_text(live_judge.request_line(1, answer="bad"))
    srv, state = judge_server.start(live_judge.over_http)
    try:
        out = subprocess.run([sys.executable, "-m", "ragmeter", "watch", str(log), "--judge", "openai:m",
                              "--judge-base-url", state.url + "/v1", "--state", str(tmp_path / "s"), "--port", "0",
                              "--once", "--alert", "faithfulness<0.5", "--exit-on-alert"],
                             env={**os.environ, "OPENAI_API_KEY": "k"}, capture_output=True, text=True, timeout=60)
        assert out.returncode == 3 and "ALERT: faithfulness rolling mean 0.000 is below 0.5" in out.stderr
    finally:
        srv.shutdown()


@pytest.mark.parametrize("span_json", [
    {"span_id": "s1", "attributes": {"input.value": "Q?", "output.value": "ok",
                                     "retrieval.documents.0.document.id": "d1",
                                     "retrieval.documents.0.document.content": "text"}},
])
def test_openinference_spans_are_read(tmp_path, span_json):
    log = tmp_path / "spans.jsonl"
    log.write_text(json.dumps(span_json) + "\n")
    w = watcher(tmp_path, log)
    assert w.poll() == 1
    assert json.loads((tmp_path / "state" / "scored.jsonl").read_text())["id"] == "s1"
