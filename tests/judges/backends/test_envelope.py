"""``ragmeter.judges.backends.envelope``: Reading a server's envelope (the JSON around a judge's answer),
trusting nothing in it."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.judges.backends import envelope
from ragmeter.judges.transport import JudgeReplyError
from tests.hostile import JSON_VALUES, REPLY_CONTENT

pytestmark = pytest.mark.slow  # every test here took over 2 s (durations of 2026-12-01, load 4 to 8)

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


usage = st.one_of(st.none(), JSON_VALUES, st.fixed_dictionaries(
    {}, optional={"prompt_tokens": JSON_VALUES, "completion_tokens": JSON_VALUES,
                  "input_tokens": JSON_VALUES, "output_tokens": JSON_VALUES}))


openai_envelopes = st.one_of(JSON_VALUES, st.builds(
    lambda message, use, finish, lp: {"choices": [{"message": message, "finish_reason": finish, "logprobs": lp}],
                                      "usage": use},
    st.one_of(JSON_VALUES, st.fixed_dictionaries({"role": st.just("assistant"), "content": REPLY_CONTENT})),
    usage, JSON_VALUES, JSON_VALUES))


anthropic_envelopes = st.one_of(JSON_VALUES, st.builds(
    lambda blocks, use, stop: {"content": blocks, "usage": use, "stop_reason": stop},
    st.one_of(JSON_VALUES, st.lists(st.one_of(JSON_VALUES, st.fixed_dictionaries(
        {"type": st.sampled_from(["tool_use", "text"]), "input": JSON_VALUES, "text": REPLY_CONTENT})), max_size=3)),
    usage, JSON_VALUES))


def _body(doc) -> bytes:
    return doc.encode() if isinstance(doc, str) else json.dumps(doc, allow_nan=True).encode()


@FUZZ
@given(st.one_of(openai_envelopes.map(_body), st.binary(max_size=200)))
def test_openai_envelopes_read_or_fail_typed(body):
    try:
        env = envelope.openai(body)
    except JudgeReplyError:
        return
    assert isinstance(env.text, str) and env.input_tokens >= 0 and env.output_tokens >= 0


@FUZZ
@given(st.one_of(anthropic_envelopes.map(_body), st.binary(max_size=200)))
def test_anthropic_envelopes_read_or_fail_typed(body):
    try:
        env = envelope.anthropic(body)
    except JudgeReplyError:
        return
    assert isinstance(env.text, str) and env.input_tokens >= 0
