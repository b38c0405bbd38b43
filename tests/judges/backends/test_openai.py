"""The OpenAI-compatible backend, and the judge over it, against a real HTTP server on 127.0.0.1:
the wire protocol, retries, re-asks, fatal configuration errors, the ledger, budgets and secrets."""

from __future__ import annotations

import asyncio
import time

import pytest

from ragmeter.judges import (
    Budget,
    BudgetExceeded,
    Decoding,
    Judge,
    JudgeConfigError,
    JudgeTransportError,
    OpenAIBackend,
    RetryPolicy,
)
from ragmeter.judges.transport import AdaptiveLimiter
from ragmeter.ledger import Ledger
from tests import judge_server
from tests.judge_fixtures import answer, request

KEY = "sk-test-SECRET-123"


@pytest.fixture
def server():
    srv, state = judge_server.start(answer)
    yield state
    srv.shutdown()


def openai_judge(server, tmp_path=None, *, retries=3, timeout=5.0, concurrency=4, **kw):
    backend = OpenAIBackend("gpt-test", base_url=server.url + "/v1", api_key=KEY, concurrency=concurrency,
                            policy=RetryPolicy(max_retries=retries, base_delay=0.01, timeout=timeout))
    ledger = Ledger(tmp_path / "ledger.sqlite") if tmp_path else Ledger(":memory:")
    return Judge(backend, ledger=ledger, **kw)


def ask(judge, req):
    async def go():
        try:
            return await judge.ask(req)
        finally:
            await judge.backend.aclose()
    return asyncio.run(go())


def test_openai_wire_protocol_and_ledger(server, tmp_path):
    judge = openai_judge(server, tmp_path)
    j = ask(judge, request("a"))
    assert j.ok and j.value == {"verdicts": [{"id": i, "verdict": "supported"} for i in (1, 2, 3)]}
    assert (j.calls, j.reasks, j.cached) == (1, 0, False) and j.input_tokens > 0
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["headers"]["Authorization"] == f"Bearer {KEY}"
    p = sent["payload"]
    assert p["temperature"] == 0.0 and p["seed"] == 0 and p["model"] == "gpt-test"
    assert p["response_format"]["type"] == "json_schema" and p["response_format"]["json_schema"]["strict"] is True
    again = ask(openai_judge(server, tmp_path), request("a"))  # a new process would see the same file
    assert again.cached and again.value == j.value and server.count == 1


def test_429_with_retry_after_is_honoured(server):
    server.queue({"status": 429, "headers": {"Retry-After": "1"}})
    judge = openai_judge(server)
    start = time.monotonic()
    j = ask(judge, request("a"))
    assert j.ok and server.count == 2 and time.monotonic() - start >= 0.9
    assert judge.backend.stats["retries"] == 1 and judge.backend.limiter.throttled == 1


def test_5xx_is_retried_then_given_up_without_storing(server):
    server.queue({"status": 500}, {"status": 502})
    judge = openai_judge(server)
    assert ask(judge, request("a")).ok and server.count == 3
    server.queue(*[{"status": 500}] * 10)
    judge = openai_judge(server, retries=2)
    with pytest.raises(JudgeTransportError, match="gave up after 3 attempts: HTTP 500"):
        ask(judge, request("b"))
    assert server.count == 6 and len(judge.ledger) == 0  # nothing stored: a rerun tries again


def test_slow_reply_past_the_timeout_is_retried(server):
    server.queue({"delay": 1.5})
    judge = openai_judge(server, timeout=0.5)
    assert ask(judge, request("a")).ok and server.count == 2


def test_malformed_json_gets_a_reask_that_shows_the_reply(server):
    server.queue({"content": "Sure! {verdicts: [1, 2"})
    judge = openai_judge(server)
    j = ask(judge, request("a"))
    assert j.ok and (j.calls, j.reasks) == (2, 1)
    reask = server.requests[1]["payload"]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "Sure! {verdicts: [1, 2"}
    assert "not valid JSON" in reask[-1]["content"]


def test_reask_asks_only_for_missing_items(server):
    server.queue({"content": {"verdicts": [{"id": 1, "verdict": "supported"}, {"id": 2, "verdict": "maybe"},
                                           {"id": 3, "verdict": "contradicted"}]}})
    j = ask(openai_judge(server), request("a", n=5))
    assert j.ok and j.reasks == 1
    last_message = server.requests[1]["payload"]["messages"][-1]["content"]
    assert "for id 2, 4, 5 (the other items are already recorded)" in last_message
    assert [v["verdict"] for v in j.value["verdicts"]] == ["supported", "supported", "contradicted", "supported",
                                                          "supported"]


def test_schema_invalid_reply_fails_after_bounded_reasks_and_keeps_the_raw_reply(server, tmp_path):
    bad = {"content": {"verdicts": [{"id": 1, "verdict": "perhaps"}]}}
    server.queue(bad, bad, bad)
    judge = openai_judge(server, tmp_path)
    j = ask(judge, request("a", n=1))
    assert not j.ok and (j.calls, j.reasks) == (3, 2) and server.count == 3
    assert j.error.startswith("JudgeOutputError: no valid item for id 1") and "perhaps" in j.raw
    stored = judge.ledger.get(j.key)
    assert stored.status == "failed" and "perhaps" in stored.raw
    assert ask(openai_judge(server, tmp_path), request("a", n=1)).cached  # reproducible: no new call


def test_unkeyed_schema_errors_are_named(server):
    server.queue({"content": {"verdicts": "all good"}})
    j = ask(openai_judge(server), request("a", keyed=False))
    assert j.ok and j.reasks == 1
    assert "verdicts: 'all good' is not of type 'array'" in server.requests[1]["payload"]["messages"][-1]["content"]


def test_truncated_reply_is_reasked(server):
    server.queue({"truncate": True})
    j = ask(openai_judge(server), request("a"))
    assert j.ok and j.reasks == 1
    assert "cut off at the token limit" in server.requests[1]["payload"]["messages"][-1]["content"]


@pytest.mark.parametrize("status,words", [(401, "API key"), (403, "API key"), (404, "model name and the base URL")])
def test_auth_and_not_found_stop_the_run_at_once(server, status, words):
    server.queue({"status": status})
    with pytest.raises(JudgeConfigError, match=words) as info:
        ask(openai_judge(server), request("a"))
    assert server.count == 1 and KEY not in str(info.value)


def test_json_mode_fallback_when_structured_output_is_rejected(server):
    server.queue({"reject_schema": True})
    judge = openai_judge(server)
    assert ask(judge, request("a")).ok
    formats = [r["payload"]["response_format"]["type"] for r in server.requests]
    assert formats == ["json_schema", "json_object"]
    assert "JSON Schema" in server.requests[1]["payload"]["messages"][0]["content"]


def test_a_missing_key_names_the_setting(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(JudgeConfigError, match="set OPENAI_API_KEY"):
        OpenAIBackend("gpt-x")


def test_base_url_and_key_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert ask(Judge(OpenAIBackend("gpt-env")), request("a")).ok
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"


def test_concurrency_is_bounded(server):
    server.delay = 0.05
    judge = openai_judge(server, concurrency=3)
    results = judge.run([request(f"item {i}") for i in range(20)])
    assert all(r.ok for r in results) and server.count == 20 and server.max_in_flight <= 3


def test_limiter_halves_on_throttle_and_grows_back():
    async def go():
        lim = AdaptiveLimiter(8)
        lim.on_throttle(0.0)
        assert lim.limit == 4
        for _ in range(4):
            lim.on_success()
        assert lim.limit == 5
    asyncio.run(go())


def test_budget_stops_before_passing_the_cap_and_the_run_resumes(server, tmp_path):
    reqs = [request(f"item {i}") for i in range(6)]
    judge = openai_judge(server, tmp_path, concurrency=1, decoding=Decoding(max_tokens=100),
                         budget=Budget(max_tokens=500))
    with pytest.raises(BudgetExceeded, match="budget of 500 tokens"):
        judge.run(reqs)
    done = len(judge.ledger)
    assert 1 <= done < 6 and server.count == done
    resumed = openai_judge(server, tmp_path, concurrency=1, decoding=Decoding(max_tokens=100))  # same key
    assert resumed.plan(reqs)["calls"] == 6 - done
    assert all(r.ok for r in resumed.run(reqs)) and server.count == 6


def test_dry_run_counts_calls_and_tokens(server, tmp_path):
    judge = openai_judge(server, tmp_path)
    plan = judge.plan([request("a"), request("b")])
    assert plan["calls"] == 2 and plan["estimated_input_tokens"] > 0 and server.count == 0


def test_no_secret_in_ledger_or_identity(server, tmp_path):
    judge = openai_judge(server, tmp_path)
    ask(judge, request("a"))
    judge.ledger.close()
    assert KEY.encode() not in (tmp_path / "ledger.sqlite").read_bytes()
    assert KEY not in repr(judge.identity)


def test_a_judge_runs_again_in_a_new_event_loop(server):
    """Each sync run has its own event loop; the limiter must not stay bound to the first."""
    server.delay = 0.02
    judge = openai_judge(server, concurrency=2, budget=Budget(max_tokens=10**9))
    for round_ in range(2):
        assert all(r.ok for r in judge.run([request(f"round {round_} item {i}") for i in range(8)]))
    assert server.count == 16 and server.max_in_flight <= 2
