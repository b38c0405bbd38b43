"""``ragmeter.judges.judge``: The judge: one async core that asks a backend, validates, re-asks, and
records in the ledger."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.core.settings import Settings
from ragmeter.judges import Judge, JudgeTransportError, OpenAIBackend, RetryPolicy, ScriptedBackend
from ragmeter.ledger import Ledger
from ragmeter.runs.driver import run_evaluation
from tests.hostile import JSON_VALUES, REPLY_CONTENT

from .. import judge_server
from ..judge_fixtures import answer, request

pytestmark = pytest.mark.slow  # every test here took over 2 s (durations of 2026-12-01, load 4 to 8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(REPLY_CONTENT, JSON_VALUES), min_size=1, max_size=3))
def test_the_judge_turns_any_reply_into_a_judgment_or_a_typed_failure(replies):
    answers = iter(replies * 10)
    judge = Judge(ScriptedBackend(lambda *a: next(answers)), max_reasks=1)
    for out in judge.run([request("a"), request("b")]):
        assert isinstance(out, (JudgeTransportError,)) or (out.ok in (True, False))


RETRIES, REASKS, TIMEOUT = 3, 1, 0.3


KINDS = ("ok", "slow", "500", "html", "invalid", "500 once", "429 once")


#: the most sends one ask of a key may cost, by its fault
BOUND = {"ok": 1, "slow": 2, "500": RETRIES + 1, "html": 1, "invalid": REASKS + 1, "500 once": 2, "429 once": 2}


def base_key(payload: dict) -> str:
    """The request key as the server sees it: the prompt's messages, without a re-ask's tail."""
    return hashlib.sha256(json.dumps(payload["messages"][:2], sort_keys=True).encode()).hexdigest()[:16]


class KeyedFaults:
    """``state.actions`` that picks each request's fault from its key (the server appends the
    request's record just before it pops the action, under one lock)."""

    def __init__(self, state, kind_of: dict[str, str]) -> None:
        self.state, self.kind_of, self.seen = state, kind_of, Counter()

    def __bool__(self) -> bool:
        return True

    def popleft(self) -> dict:
        payload = self.state.requests[-1]["payload"]
        key = base_key(payload)
        kind = self.kind_of.get(key, "ok")
        self.seen[key] += 1
        if kind == "slow":
            return {"delay": TIMEOUT * 4}
        if kind == "500" or (kind == "500 once" and self.seen[key] == 1):
            return {"status": 500}
        if kind == "429 once" and self.seen[key] == 1:
            return {"status": 429, "headers": {"retry-after": "0"}}
        if kind == "html":
            return {"body": "<html>bad gateway</html>", "content_type": "text/html"}
        if kind == "invalid":  # the re-asks too: it never validates, and is stored as failed
            return {"content": {"verdicts": "not a list"}}
        return {}


def test_each_request_key_is_asked_once_per_session_under_faults():
    items = [f"item {i}" for i in range(70)]
    server, state = judge_server.start(answer)
    try:
        kind_of = {base_key_of(item): KINDS[i % len(KINDS)] for i, item in enumerate(items)}
        state.actions = KeyedFaults(state, kind_of)
        backend = OpenAIBackend("m", base_url=state.url + "/v1", api_key="k", concurrency=16,
                                policy=RetryPolicy(max_retries=RETRIES, base_delay=0.01, max_delay=0.02,
                                                   timeout=TIMEOUT))
        judge = Judge(backend, ledger=Ledger(":memory:"), max_reasks=REASKS)
        asks = [request(item) for item in items for _ in range(4)]
        random.Random(3).shuffle(asks)
        with judge.session():  # one evaluation: two batches (its stages, or two blocks)
            first = judge.run(asks[: len(asks) // 2])
            second = judge.run(asks[len(asks) // 2:])
    finally:
        server.shutdown()
        server.server_close()
    sent = Counter(base_key(r["payload"]) for r in state.requests)
    over = {kind_of[k]: n for k, n in sent.items() if n > BOUND[kind_of[k]]}
    assert not over, f"keys asked more than one ask costs: {over}"
    assert set(sent) == set(kind_of)  # every key was asked
    failed = [x for x in first + second if isinstance(x, JudgeTransportError)]
    assert len(failed) == 4 * sum(kind_of[base_key_of(i)] in ("slow", "500", "html") for i in items)
    stats = judge.stats
    assert stats.shared + stats.cached == len(asks) - len(items)  # every repeat: no call (in flight, or after)


def base_key_of(item: str) -> str:
    return base_key({"messages": request(item).messages()})


def test_a_streamed_run_asks_a_failing_key_once_across_its_blocks(tmp_path, monkeypatch):
    """Every sample holds the same answer: one extraction key, asked in each of 3 blocks. The
    server fails it with 500s: one ask's sends in all, not one per block."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000")
    row = {"question": "How long is the R2 warranty?", "answer": "The R2 has a 24-month warranty.",
           "retrieved": [{"id": "c1", "text": "The R2 carries a 24-month warranty."}]}
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"s{i}", **row}) + "\n" for i in range(6)))
    server, state = judge_server.start(answer)
    state.actions = KeyedFaults(state, _AlwaysFails())
    try:
        settings = Settings(dataset=str(data), metrics=("faithfulness",), judge="openai:m",
                            judge_base_url=state.url + "/v1", block=2, timeout=5, concurrency=4,
                            runs_dir=str(tmp_path / "runs"), ledger=str(tmp_path / "ledger.sqlite"))
        run_evaluation(settings)
    finally:
        server.shutdown()
        server.server_close()
    sent = Counter(base_key(r["payload"]) for r in state.requests)
    assert len(sent) == 1 and sum(sent.values()) == RetryPolicy().max_retries + 1, sent


class _AlwaysFails(dict):
    """Every key's fault: a 500."""

    def get(self, key, default=None):
        return "500"


def test_a_ledger_that_cannot_be_written_stops_the_run_cleanly(tmp_path, monkeypatch, caplog, capfd):
    """A full ledger disk: one StorageError with its fix, every other ask ended before the loop
    closes (it printed "unhandled exception during asyncio.run() shutdown" and a traceback)."""
    import gc
    import logging
    import sqlite3
    import warnings

    from ragmeter.core.errors import StorageError

    ledger = Ledger(tmp_path / "ledger.sqlite")
    put = ledger.put

    def full(**kw):
        if len(ledger) >= 3:
            with ledger._guard("written"):
                raise sqlite3.OperationalError("database or disk is full")
        put(**kw)

    monkeypatch.setattr(ledger, "put", full)
    server, state = judge_server.start(answer)
    state.delay = 0.02
    try:
        backend = OpenAIBackend("m", base_url=state.url + "/v1", api_key="k", concurrency=16,
                                policy=RetryPolicy(timeout=10))
        with caplog.at_level(logging.ERROR, logger="asyncio"), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(StorageError, match="disk is full.*Fix: free some disk space"):
                Judge(backend, ledger=ledger).run([request(f"item {i}") for i in range(400)])
            gc.collect()  # a task whose exception nobody retrieved is reported when it is collected
    finally:
        server.shutdown()
        server.server_close()
    assert not [r for r in caplog.records if r.name == "asyncio"], [r.getMessage() for r in caplog.records]
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]
    err = capfd.readouterr().err
    assert "Traceback" not in err and "never retrieved" not in err and "shutdown" not in err, err
