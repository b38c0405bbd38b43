"""``ragmeter.judges.replies``: Reading a judge's reply: tolerant JSON extraction, schema validation, keyed merging."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.judges.backends import Reply
from tests.judge_fixtures import request

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


scalars = st.none() | st.booleans() | st.integers(min_value=-2 ** 70, max_value=2 ** 70) | \
    st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)


json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


good_verdicts = {"verdicts": [{"id": i, "verdict": "supported"} for i in (1, 2, 3)]}


content = st.one_of(json_values, st.just(json.dumps(good_verdicts)), st.text(max_size=60),
                    st.builds(lambda d: "[" * d + "]" * d, st.integers(0, 50_000)))


@pytest.mark.slow
@FUZZ
@given(st.one_of(content, json_values.map(lambda v: json.dumps(v, allow_nan=True))), st.booleans())
def test_reply_content_is_checked_without_escaping_errors(text, truncated):
    value, problem, _ = Judge._check(request("a"), Reply(str(text), 1, 1, 0.0, truncated), {})
    assert (problem is None) == (value is not None) or problem is None
    if problem is None:
        assert value == good_verdicts


def test_deep_reply_content_is_one_failed_item():
    deep = "[" * 100_000 + "]" * 100_000
    judge = Judge(ScriptedBackend(lambda *a: deep), max_reasks=0)
    (j,) = asyncio.run(judge.ask_all([request("a")]))
    assert not j.ok and "JSON" in j.error
