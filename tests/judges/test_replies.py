"""``ragmeter.judges.replies``: Reading a judge's reply: tolerant JSON extraction, schema validation, keyed merging."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.judges.backends import Reply
from tests.hostile import GOOD_VERDICTS, JSON_VALUES, REPLY_CONTENT
from tests.judge_fixtures import request

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@FUZZ
@given(st.one_of(REPLY_CONTENT, JSON_VALUES.map(lambda v: json.dumps(v, allow_nan=True))), st.booleans())
def test_reply_content_is_checked_without_escaping_errors(text, truncated):
    value, problem, _ = Judge._check(request("a"), Reply(str(text), 1, 1, 0.0, truncated), {})
    assert (problem is None) == (value is not None) or problem is None
    if problem is None:
        assert value == GOOD_VERDICTS


def test_deep_reply_content_is_one_failed_item():
    deep = "[" * 100_000 + "]" * 100_000
    judge = Judge(ScriptedBackend(lambda *a: deep), max_reasks=0)
    (j,) = asyncio.run(judge.ask_all([request("a")]))
    assert not j.ok and "JSON" in j.error
