"""Long silences: while a judge call is in flight, a progress line comes every
--progress-interval seconds (nothing was printed until the call finished, 162 s in README's
first command). The judge server here does not answer until the test has seen such a line, so
there is no timed assertion: without the heartbeat the server gives up waiting and the test fails."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests import judge_server, seed_judge

ROOT = Path(__file__).resolve().parents[2]
WARRANTY = ROOT / "examples" / "warranty"
PATIENCE = 30.0  # seconds the server waits for the heartbeat before answering anyway


class HeldServer:
    """The seed judge, holding every reply until ``seen`` is set (or PATIENCE runs out)."""

    def __init__(self, reply=seed_judge.over_http) -> None:
        self.reply = reply
        self.seen = threading.Event()
        self.answered_at: float | None = None
        self.srv, self.state = judge_server.start(self.respond)

    def respond(self, text: str, payload: dict):
        self.seen.wait(PATIENCE)
        if self.answered_at is None:
            self.answered_at = time.monotonic()
        return self.reply(text, payload)


@pytest.fixture
def held():
    server = HeldServer()
    yield server
    server.seen.set()
    server.srv.shutdown()


@pytest.mark.slow  # a subprocess
def test_eval_prints_a_line_while_the_first_call_is_in_flight(held, tmp_path):
    env = dict(os.environ, OPENAI_API_KEY="sk-test")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragmeter", "eval", str(WARRANTY / "dataset.jsonl"), "--corpus",
         str(WARRANTY / "corpus.jsonl"), "-m", "faithfulness", "--judge", "openai:m", "--judge-base-url",
         held.state.url + "/v1", "--runs-dir", str(tmp_path / "runs"), "--progress", "plain",
         "--progress-interval", "0.3"], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        cwd=tmp_path)
    lines: list[tuple[float, str]] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        lines.append((time.monotonic(), line.rstrip("\n")))
        if "in flight" in line:
            held.seen.set()
    proc.wait(timeout=120)
    assert proc.returncode == 0, "\n".join(t for _, t in lines)
    beats = [(t, text) for t, text in lines if "judge call in flight" in text]
    assert beats, "\n".join(t for _, t in lines)
    assert held.answered_at is not None and beats[0][0] < held.answered_at
    first = beats[0][1]
    assert first.startswith("ragmeter: extracting claims 0/1 (0%), 0 calls, 0 cached, 1 judge call in flight, ")
    assert first.endswith(" elapsed")


@pytest.mark.slow  # a real HTTP judge call held for the heartbeat
def test_judge_heartbeat_reports_calls_in_flight_through_the_real_transport(held, tmp_path):
    """The block a non-eval command wraps its judge calls in (testset generate, watch)."""
    from ragmeter.judges import Judge, JudgeRequest, load_prompt
    from ragmeter.judges.backends import OpenAIBackend
    from ragmeter.judges.schemas import VERIFY
    from ragmeter.report.heartbeat import judge_heartbeat

    held.reply = lambda text, payload: {"verdicts": [{"id": 1, "verdict": "supported", "sources": ["reference"],
                                                      "combined": False, "quote": "24 months"}]}
    judge = Judge(OpenAIBackend("m", base_url=held.state.url + "/v1", api_key="sk-test"))
    request = JudgeRequest(load_prompt("claims.verify"), {"evidence": "[reference] The R2 has 24 months.",
                                                          "claims": "1. The R2 has 24 months."}, VERIFY, "verdicts")
    written: list[str] = []

    def write(text: str) -> None:
        written.append(text)
        held.seen.set()

    with judge_heartbeat(judge, "generating questions", write=write, interval=0.2):
        (j,) = judge.run([request])
    assert j.ok
    assert written and written[0].startswith("ragmeter: generating questions: 1 judge call in flight, ")
    count = len(written)
    time.sleep(0.5)
    assert len(written) == count  # stopped with the block


def test_tokens_a_backend_reports_are_shown():
    from ragmeter.judges import Judge, ScriptedBackend
    from ragmeter.report.heartbeat import in_flight_text

    backend = ScriptedBackend(lambda *a: {})
    judge = Judge(backend)
    assert in_flight_text(judge) == ""
    judge.stats.in_flight = 2
    backend.tokens_generated(40)
    backend.tokens_generated(2)
    assert in_flight_text(judge) == "2 judge calls in flight, 42 tokens generated so far"


def test_the_calls_in_flight_are_those_on_the_wire_never_past_the_concurrency():
    """The trial's progress line said "7199 judge calls in flight" at concurrency 16: it counted the
    calls waiting for a slot too."""
    import re

    from ragmeter.judges import Judge, OpenAIBackend, RetryPolicy
    from ragmeter.report.heartbeat import in_flight_text
    from tests.judge_fixtures import answer, request

    srv, state = judge_server.start(answer)
    state.delay = 0.05
    judge = Judge(OpenAIBackend("m", base_url=state.url + "/v1", api_key="k", concurrency=4,
                                policy=RetryPolicy(timeout=10)))
    seen: list[int] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            m = re.match(r"(\d+) judge call", in_flight_text(judge))
            if m:
                seen.append(int(m.group(1)))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        assert all(j.ok for j in judge.run([request(f"item {i}") for i in range(40)]))
    finally:
        done.set()
        watcher.join()
        srv.shutdown()
    assert seen and max(seen) <= 4 and judge.stats.in_flight == 0
