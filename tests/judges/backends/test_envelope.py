"""``ragmeter.judges.backends.envelope``: Reading a server's envelope (the JSON around a judge's answer),
trusting nothing in it."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.judges.backends import envelope
from ragmeter.judges.transport import JudgeReplyError

pytestmark = pytest.mark.slow  # every test here took over 2 s (durations of 2026-12-01, load 4 to 8)

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


scalars = st.none() | st.booleans() | st.integers(min_value=-2 ** 70, max_value=2 ** 70) | \
    st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)


json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


good_verdicts = {"verdicts": [{"id": i, "verdict": "supported"} for i in (1, 2, 3)]}


content = st.one_of(json_values, st.just(json.dumps(good_verdicts)), st.text(max_size=60),
                    st.builds(lambda d: "[" * d + "]" * d, st.integers(0, 50_000)))


usage = st.one_of(st.none(), json_values, st.fixed_dictionaries(
    {}, optional={"prompt_tokens": json_values, "completion_tokens": json_values,
                  "input_tokens": json_values, "output_tokens": json_values}))


openai_envelopes = st.one_of(json_values, st.builds(
    lambda message, use, finish, lp: {"choices": [{"message": message, "finish_reason": finish, "logprobs": lp}],
                                      "usage": use},
    st.one_of(json_values, st.fixed_dictionaries({"role": st.just("assistant"), "content": content})),
    usage, json_values, json_values))


anthropic_envelopes = st.one_of(json_values, st.builds(
    lambda blocks, use, stop: {"content": blocks, "usage": use, "stop_reason": stop},
    st.one_of(json_values, st.lists(st.one_of(json_values, st.fixed_dictionaries(
        {"type": st.sampled_from(["tool_use", "text"]), "input": json_values, "text": content})), max_size=3)),
    usage, json_values))


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
