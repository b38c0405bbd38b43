"""The Anthropic Messages backend against a real HTTP server on 127.0.0.1: the tool-use wire
protocol and its key."""

from __future__ import annotations

import pytest

from ragmeter.judges import AnthropicBackend, Judge, JudgeConfigError, RetryPolicy
from tests import judge_server
from tests.judge_fixtures import answer, request
from tests.judges.backends.test_openai import KEY, ask


@pytest.fixture
def server():
    srv, state = judge_server.start(answer)
    yield state
    srv.shutdown()


def test_anthropic_tool_use_protocol(server):
    backend = AnthropicBackend("claude-test", base_url=server.url, api_key=KEY,
                               policy=RetryPolicy(max_retries=1, base_delay=0.01))
    j = ask(Judge(backend), request("a"))
    assert j.ok and len(j.value["verdicts"]) == 3
    sent = server.requests[0]
    assert sent["path"] == "/v1/messages"
    assert sent["headers"]["x-api-key"] == KEY and sent["headers"]["anthropic-version"] == "2023-06-01"
    p = sent["payload"]
    assert p["tool_choice"] == {"type": "tool", "name": "verdicts"}
    assert p["tools"][0]["input_schema"]["type"] == "object"
    assert p["system"] == "You grade items." and all(m["role"] != "system" for m in p["messages"])


def test_a_missing_key_names_the_setting(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(JudgeConfigError, match="set ANTHROPIC_API_KEY"):
        AnthropicBackend("claude-x")
