"""A judge call's latency is its time on the wire; the wait for a concurrency slot is apart
(judges/transport.py, the backends' replies and the judge summary)."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import httpx
import pytest

from ragmeter.judges import (
    AnthropicBackend,
    Judge,
    JudgeConfigError,
    OpenAIBackend,
    RetryPolicy,
)
from ragmeter.judges.backends import Reply
from ragmeter.judges.judge import JudgeStats, Judgment, _Tally
from ragmeter.judges.transport import (
    AdaptiveLimiter,
    JudgeReplyError,
    JudgeTransportError,
    retry_after,
    send,
)
from ragmeter.ledger import Ledger
from ragmeter.trust.agreement_set import check, load_set
from tests import judge_server
from tests.judge_fixtures import answer, request

CALL = 0.05  # each request's time on the wire (a sleep: never shorter)


def test_calls_queued_for_one_slot_are_timed_from_their_start_on_the_wire() -> None:
    async def main() -> tuple[list[dict[str, float]], float]:
        limiter = AdaptiveLimiter(1)  # one slot: four calls wait their turn
        timings: list[dict[str, float]] = [{} for _ in range(4)]

        async def request() -> httpx.Response:
            await asyncio.sleep(CALL)
            return httpx.Response(200)

        start = time.perf_counter()
        await asyncio.gather(*(send(request, limiter=limiter, policy=RetryPolicy(), backend="t", stats={},
                                    timing=t) for t in timings))
        return timings, time.perf_counter() - start

    timings, wall = asyncio.run(main())
    wire = [t["wire_s"] for t in timings]
    queue = sorted(t["queue_s"] for t in timings)
    assert all(w >= CALL for w in wire)
    assert sum(wire) <= wall  # one at a time on the wire: their wire times fit in the run
    assert queue[0] < CALL and all(q >= k * CALL * 0.99 for k, q in enumerate(queue))  # the k-th waits k calls
    assert sum(wire) + sum(queue) > wall  # what latency_s summed before: the waits counted as latency


def test_the_summary_keeps_the_wait_apart() -> None:
    tally = _Tally()
    tally.add(Reply("{}", 10, 2, 0.5, queue_s=3.0))
    tally.add(Reply("{}", 10, 2, 0.25, queue_s=1.0))
    stats = JudgeStats()
    stats.add("p", Judgment("k", True, {}, None, "{}", tally.calls, 1, 20, 4, cached=False, latency_s=tally.latency,
                            queue_s=tally.queue))
    assert stats.as_dict()["latency_s"] == 0.75 and stats.as_dict()["queue_s"] == 4.0


KEY = "sk-fault-KEY-987654"


DEEP = "[" * 100_000 + "]" * 100_000


OK_USAGE = {"prompt_tokens": 3, "completion_tokens": 2}


def chat(message, usage=OK_USAGE) -> dict:
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage}


GOOD = json.dumps({"verdicts": [{"id": i, "verdict": "supported"} for i in (1, 2, 3)]})


#: Envelopes that are not a chat completion: each must fail its item only, unstored.
OPENAI_BROKEN = {
    "message a string": chat("hello"),
    "prompt_tokens a word": chat({"role": "assistant", "content": GOOD}, {"prompt_tokens": "many"}),
    "usage a list": chat({"role": "assistant", "content": GOOD}, [1, 2]),
    "completion_tokens negative": chat({"role": "assistant", "content": GOOD}, {"completion_tokens": -4}),
    "content a number": chat({"role": "assistant", "content": 42}),
    "content parts not text": chat({"role": "assistant", "content": [{"type": "image", "text": 5}]}),
    "choices empty": {"choices": [], "usage": OK_USAGE},
    "choices an object": {"choices": {"0": {}}},
    "top level a list": [1, 2, 3],
    "nested 100,000 deep": DEEP,
    "HTML page with status 200": "<html><body><h1>502 Bad Gateway</h1>nginx</body></html>",
    "empty body": "",
    "not UTF-8": b"\xff\xfe\xfa{",
}


ANTHROPIC_BROKEN = {
    "content a string": {"content": "hi", "usage": {"input_tokens": 1, "output_tokens": 1}},
    "block a string": {"content": ["hi"]},
    "text block not a string": {"content": [{"type": "text", "text": ["x"]}]},
    "input_tokens a word": {"content": [{"type": "tool_use", "input": json.loads(GOOD)}],
                            "usage": {"input_tokens": "lots"}},
    "usage a list": {"content": [{"type": "tool_use", "input": json.loads(GOOD)}], "usage": []},
    "nested 100,000 deep": DEEP,
    "HTML page with status 200": "<!doctype html><title>Just a moment...</title>",
}


@pytest.fixture
def server():
    srv, state = judge_server.start(answer)
    yield state
    srv.shutdown()


def make_judge(server, tmp_path, kind="openai", **policy):
    pol = RetryPolicy(**{"max_retries": 2, "base_delay": 0.01, "timeout": 5.0, **policy})
    if kind == "openai":
        backend = OpenAIBackend("m", base_url=server.url + "/v1", api_key=KEY, concurrency=1, policy=pol)
    else:
        backend = AnthropicBackend("m", base_url=server.url, api_key=KEY, concurrency=1, policy=pol)
    return Judge(backend, ledger=Ledger(tmp_path / "ledger.sqlite"), max_reasks=0)


def body_action(body) -> dict:
    return {"body": body, "content_type": "text/html" if isinstance(body, str) and body.startswith("<") else
            "application/json"}


@pytest.mark.parametrize("kind,name,body", [("openai", n, b) for n, b in OPENAI_BROKEN.items()]
                         + [("anthropic", n, b) for n, b in ANTHROPIC_BROKEN.items()])
def test_a_broken_envelope_fails_one_item_is_not_stored_and_a_rerun_asks_again(server, tmp_path, kind, name, body):
    server.queue(body_action(body))  # the first request gets the broken envelope, the others are fine
    judge = make_judge(server, tmp_path, kind)
    out = judge.run([request("a"), request("b"), request("c")])
    assert isinstance(out[0], JudgeReplyError), out[0]
    assert KEY not in str(out[0]) and "nothing was stored" in str(out[0])
    assert all(not isinstance(j, Exception) and j.ok for j in out[1:])
    assert judge.stats.failed == 1 and judge.stats.unreachable == 1
    assert len(judge.ledger) == 2  # the broken one is not cached as final
    again = make_judge(server, tmp_path, kind)
    before = server.count
    assert all(j.ok for j in again.run([request("a"), request("b"), request("c")]))
    assert server.count == before + 1  # only the one that failed is asked again


def test_an_invalid_reply_is_stored_as_failed_and_retry_failed_asks_it_again(server, tmp_path):
    server.queue({"content": {"verdicts": "not a list"}})
    (j,) = make_judge(server, tmp_path).run([request("a")])
    assert not j.ok and "JudgeOutputError" in j.error
    (cached,) = make_judge(server, tmp_path).run([request("a")])
    assert cached.cached and not cached.ok and server.count == 1  # final until asked to retry
    retry = make_judge(server, tmp_path)
    retry.retry_failed = True
    assert retry.plan([request("a")])["calls"] == 1
    (fixed,) = retry.run([request("a")])
    assert fixed.ok and not fixed.cached and server.count == 2
    (after,) = make_judge(server, tmp_path).run([request("a")])
    assert after.ok and after.cached and server.count == 2  # the retry's answer replaced the failure


def test_5xx_then_success_counts_every_request_and_a_dead_server_fails_only_its_items(server, tmp_path):
    server.queue({"status": 500}, {"status": 502})
    judge = make_judge(server, tmp_path)
    (j,) = judge.run([request("a")])
    st = judge.stats.as_dict()
    assert j.ok and st["calls"] == 1 and st["requests"] == 3 and st["retries"] == 2
    server.queue(*[{"status": 503}] * 3)
    judge = make_judge(server, tmp_path)
    out = judge.run([request("z")])
    assert isinstance(out[0], JudgeTransportError) and not isinstance(out[0], JudgeReplyError)
    st = judge.stats.as_dict()
    assert st["failed"] == 1 and st["unreachable"] == 1 and st["requests"] == 3
    assert len(judge.ledger) == 1  # only "a"


def test_a_slow_reply_times_out_and_is_not_stored(server, tmp_path):
    server.queue({"delay": 1.0}, {"delay": 1.0})
    judge = make_judge(server, tmp_path, timeout=0.2, max_retries=1)
    (j,) = judge.run([request("a")])
    assert isinstance(j, JudgeTransportError) and "timed out" in str(j)
    assert len(judge.ledger) == 0


@pytest.mark.slow
def test_huge_retry_after_is_capped_and_said(server, tmp_path, caplog):
    server.queue({"status": 429, "headers": {"Retry-After": "100000"}})
    judge = make_judge(server, tmp_path, max_wait=0.3)
    with caplog.at_level(logging.WARNING, logger="ragmeter"):
        (j,) = judge.run([request("a")])
    assert j.ok
    assert judge.backend.limiter.paused_until > 0
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "pausing requests for 0.3 s" in said and "asked for 100000 s" in said and "capped" in said


class RecordingLimiter:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def acquire(self) -> None:
        return None

    async def release(self) -> None:
        return None

    def on_success(self) -> None:
        return None

    def on_throttle(self, wait: float) -> None:
        self.waits.append(wait)


def _http_date(offset: timedelta) -> str:
    """An HTTP-date `offset` from now, made when the test runs (not when it is collected)."""
    return format_datetime(datetime.now(timezone.utc) + offset, usegmt=True)


@pytest.mark.parametrize("header,low,high", [
    ("100000", 500.0, 500.0),  # capped at max_wait
    (timedelta(seconds=300), 200.0, 300.01),
    (timedelta(days=3), 500.0, 500.0),  # capped
    (timedelta(days=-1), 0.0, 0.0),  # in the past
    ("nan", 0.0, 0.5),  # unreadable: the back-off
], ids=["seconds", "date-in-5-min", "date-in-3-days", "date-past", "nan"])
def test_the_limiter_pauses_for_the_capped_retry_after(header, low, high):
    """The wait the limiter is told (and pauses every request for): never past max_wait."""
    if isinstance(header, timedelta):
        header = _http_date(header)
    limiter = RecordingLimiter()
    replies = iter([httpx.Response(429, headers={"Retry-After": header}), httpx.Response(200, json={})])

    async def request() -> httpx.Response:
        return next(replies)

    async def go():
        return await send(request, limiter=limiter, policy=RetryPolicy(max_wait=500.0, base_delay=0.5),
                          backend="openai", stats={})

    assert asyncio.run(go()).status_code == 200
    assert low <= limiter.waits[0] <= high


def test_retry_after_reads_seconds_and_dates():
    now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    assert retry_after(httpx.Response(429, headers={"Retry-After": "Mon, 30 Nov 2026 12:00:30 GMT"}), now) == 30.0
    assert retry_after(httpx.Response(429, headers={"Retry-After": "garbage"}), now) is None
    assert retry_after(httpx.Response(429), now) is None


def test_identical_requests_in_one_run_are_asked_once(server, tmp_path):
    server.delay = 0.1
    judge = make_judge(server, tmp_path)
    judge.backend.limiter.max_limit = judge.backend.limiter.limit = 4
    out = judge.run([request("same")] * 5 + [request("other")])
    assert all(j.ok for j in out) and server.count == 2
    assert judge.stats.shared == 4 and judge.stats.calls == 2


def test_a_fatal_setting_still_stops_the_run(server, tmp_path):
    server.queue({"status": 401})
    with pytest.raises(JudgeConfigError):
        make_judge(server, tmp_path).run([request("a")])


def test_a_key_echoed_in_a_reply_is_not_stored_or_shown(server, tmp_path):
    server.queue({"content": f"my key is {KEY}, no JSON"})
    (j,) = make_judge(server, tmp_path).run([request("a")])
    assert not j.ok and KEY not in (j.raw or "") and KEY not in (j.error or "")
    with sqlite3.connect(tmp_path / "ledger.sqlite") as db:
        dump = "\n".join(str(row) for row in db.execute("SELECT * FROM judgments"))
    assert "***" in dump and KEY not in dump


def test_judge_check_counts_failed_calls_as_failed_not_wrong(server, tmp_path):
    cases = load_set("all")[:4]

    def respond(text, payload):  # every claim answered correctly by its label, for the cases that get through
        for case in cases:
            if case.claims[0] in text:
                return {"verdicts": [{"id": i, "verdict": lab, "sources": [], "combined": False, "quote": ""}
                                     for i, lab in enumerate(case.labels, start=1)]}
        raise AssertionError("unknown case")

    server.responder = respond
    server.queue({"body": "<html>proxy error</html>", "content_type": "text/html"})
    judge = make_judge(server, tmp_path)
    report = check(judge, cases)
    first = len(cases[0].claims)
    assert report.failed == first and report.n == sum(len(c.claims) for c in cases)
    assert report.correct == report.answered == report.n - first and report.accuracy == 1.0
