"""``judges/backends/scripted.py``: the backends that call no model."""

from __future__ import annotations

import asyncio
import json

import pytest

from ragmeter.judges import Decoding, NoCallBackend, ScriptedBackend
from tests.judge_fixtures import request


def test_a_scripted_backend_answers_from_its_function_and_keeps_what_it_saw():
    backend = ScriptedBackend(lambda prompt_id, inputs, messages: {"verdicts": [{"id": 1, "verdict": "supported"}]})
    messages = [{"role": "user", "content": "x" * 40}]
    reply = asyncio.run(backend.complete(messages, {}, "verdicts", Decoding(), request("a")))
    assert json.loads(reply.text) == {"verdicts": [{"id": 1, "verdict": "supported"}]}
    assert (reply.input_tokens, reply.output_tokens) == (10, len(reply.text) // 4)  # characters / 4
    assert backend.calls == 1 and backend.seen == [(request("a").prompt.id, request("a").inputs)]


def test_a_scripted_text_answer_is_sent_as_it_is():
    backend = ScriptedBackend(lambda *_: "not json")
    reply = asyncio.run(backend.complete([{"role": "user", "content": ""}], {}, "s", Decoding(), request("a")))
    assert reply.text == "not json"


def test_a_no_call_backend_fails_when_called_and_wears_the_name_it_is_given():
    backend = NoCallBackend("openai", "gpt-x")
    assert (backend.name, backend.model) == ("openai", "gpt-x")
    with pytest.raises(AssertionError, match="a judge call was made where none may happen"):
        asyncio.run(backend.complete([], {}, "s", Decoding()))
