"""``io/formats/deepeval.py``: DeepEval ``ConversationalTestCase`` objects built by the real library
load as conversations, one sample per turn (the case's name its id). DeepEval is test-only
(``tests.installed.FOREIGN``): without it these tests skip (and fail under RAGMETER_CI=1)."""

from __future__ import annotations

import pytest

import ragmeter
from ragmeter.io.formats.base import content_id
from tests.installed import FOREIGN, need


@pytest.fixture
def deepeval(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
    monkeypatch.setenv("DEEPEVAL_CACHE_FOLDER", str(tmp_path / ".deepeval"))
    monkeypatch.chdir(tmp_path)  # deepeval makes its folder where it is imported
    return need("deepeval.test_case", FOREIGN)


@pytest.mark.slow  # importing deepeval takes seconds
def test_deepeval_conversational_test_cases_load_as_conversations(deepeval):
    turn, case = deepeval.Turn, deepeval.ConversationalTestCase
    cases = [
        case(name="warranty", scenario="A customer asks about warranties.", expected_outcome="Both terms given.",
             turns=[turn(role="user", content="How long is the R2 warranty?"),
                    turn(role="assistant", content="24 months.",
                         retrieval_context=["The R2 has 24 months.", "The R1 has 12 months."]),
                    turn(role="user", content="And the R1?"),
                    turn(role="assistant", content="12 months.", retrieval_context=["The R1 has 12 months."])]),
        case(name="greeting", turns=[turn(role="user", content="Hi?"), turn(role="assistant", content="Hello.")]),
    ]
    samples = ragmeter.load_dataset(cases).samples
    assert [s.id for s in samples] == ["warranty#1", "warranty#2", "greeting#1"]  # the case's name is its id
    assert [s.answer for s in samples] == ["24 months.", "12 months.", "Hello."]
    assert samples[0].retrieved_ids == (content_id("The R2 has 24 months."), content_id("The R1 has 12 months."))
    assert samples[1].retrieved_ids == (content_id("The R1 has 12 months."),)  # one text, one id in every turn
    assert samples[1].metadata["history"] == "User: How long is the R2 warranty?\nAssistant: 24 months."
    assert samples[0].metadata["scenario"] == "A customer asks about warranties."
    assert samples[1].metadata["expected_outcome"] == "Both terms given."
    unnamed = [case(turns=[turn(role="user", content="Q?"), turn(role="assistant", content="A.")])] * 2
    assert [s.id for s in ragmeter.load_dataset(unnamed)] == ["1#1", "2#1"]
