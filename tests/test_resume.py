"""A run killed with SIGKILL and restarted makes only the calls that had not completed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from . import judge_server
from .judge_fixtures import answer

WORKER = Path(__file__).with_name("judge_worker.py")
N = 60


def stored(path: Path) -> int:
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


def test_kill_9_then_resume_loses_and_repeats_nothing(tmp_path):
    srv, server = judge_server.start(answer)
    server.delay = 0.05
    ledger = tmp_path / "ledger.sqlite"
    try:
        first = subprocess.Popen([sys.executable, str(WORKER), server.url, str(ledger), str(N)])
        deadline = time.monotonic() + 60
        while stored(ledger) < N // 3 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        time.sleep(0.3)  # let the server finish what the dead process had in flight
        done_before, calls_before = stored(ledger), server.count
        assert 0 < done_before < N, "the kill must land mid-run"
        lost_in_flight = calls_before - done_before
        assert 0 <= lost_in_flight <= 4  # at most the concurrency limit

        second = subprocess.run([sys.executable, str(WORKER), server.url, str(ledger), str(N)],
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 0, second.stderr
        assert second.stdout.strip() == str(N)
        with sqlite3.connect(ledger) as db:
            keys = [k for (k,) in db.execute("SELECT key FROM judgments")]
            ok = db.execute("SELECT COUNT(*) FROM judgments WHERE status = 'ok'").fetchone()[0]
        assert len(keys) == len(set(keys)) == N and ok == N
        assert server.count == N + lost_in_flight
        rerun = subprocess.run([sys.executable, str(WORKER), server.url, str(ledger), str(N)],
                               capture_output=True, text=True, timeout=120)
        assert rerun.stdout.strip() == str(N) and server.count == N + lost_in_flight  # zero calls
    finally:
        srv.shutdown()


def test_concurrent_writers_do_not_corrupt_the_ledger(tmp_path):
    """Two processes judging the same items into one ledger: every judgment once, none broken."""
    srv, server = judge_server.start(answer)
    ledger = tmp_path / "ledger.sqlite"
    try:
        procs = [subprocess.Popen([sys.executable, str(WORKER), server.url, str(ledger), "30"],
                                  stdout=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=120)[0].strip() for p in procs]
        assert outs == ["30", "30"]
        with sqlite3.connect(ledger) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert db.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM judgments").fetchone() == (30, 30)
    finally:
        srv.shutdown()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
def test_label_metrics_open_no_socket(monkeypatch, warranty):
    """No telemetry, no downloads: a label-only evaluation never opens a network connection."""
    import socket

    import ragmeter

    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    assert ragmeter.evaluate(data).means()["ndcg@5"] is not None
