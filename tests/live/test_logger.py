"""``ragmeter.live.logger``: ``ragmeter.log_request(...)``: the app-side hook that appends one request per line."""

from __future__ import annotations

import json
import threading
import time

from ragmeter.live.logger import RequestLogger
from ragmeter.live.watch import kept


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


def test_log_feedback_appends_a_line_the_watcher_reads_as_feedback(tmp_path):
    from ragmeter.live.logger import RequestLogger
    from ragmeter.live.source import Feedback, parse

    logger = RequestLogger(str(tmp_path / "log.jsonl"))
    assert logger.feedback("r1", -1) and logger.flush()
    (line,) = (tmp_path / "log.jsonl").read_bytes().splitlines()
    fb = parse(line)
    assert isinstance(fb, Feedback) and (fb.id, fb.value) == ("r1", -1.0)
