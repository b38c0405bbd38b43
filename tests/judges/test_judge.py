"""``ragmeter.judges.judge``: The judge: one async core that asks a backend, validates, re-asks, and
records in the ledger."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.judges.transport import JudgeTransportError
from tests.judge_fixtures import request

scalars = st.none() | st.booleans() | st.integers(min_value=-2 ** 70, max_value=2 ** 70) | \
    st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)


json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


good_verdicts = {"verdicts": [{"id": i, "verdict": "supported"} for i in (1, 2, 3)]}


content = st.one_of(json_values, st.just(json.dumps(good_verdicts)), st.text(max_size=60),
                    st.builds(lambda d: "[" * d + "]" * d, st.integers(0, 50_000)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(content, json_values), min_size=1, max_size=3))
def test_the_judge_turns_any_reply_into_a_judgment_or_a_typed_failure(replies):
    answers = iter(replies * 10)
    judge = Judge(ScriptedBackend(lambda *a: next(answers)), max_reasks=1)
    for out in judge.run([request("a"), request("b")]):
        assert isinstance(out, (JudgeTransportError,)) or (out.ok in (True, False))
