"""``io/formats/ragas.py``: Ragas ``MultiTurnSample`` objects built by the real library (alone and
in an ``EvaluationDataset``) load as conversations, one sample per turn (refused before with "a
conversation needs an id"). Ragas is test-only
(``tests.installed.FOREIGN``): without it these tests skip (and fail under RAGMETER_CI=1)."""

from __future__ import annotations

import pytest

import ragmeter
from tests.installed import FOREIGN, need


@pytest.fixture
def ragas(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGAS_DO_NOT_TRACK", "true")
    monkeypatch.chdir(tmp_path)
    return need("ragas.dataset_schema", FOREIGN), need("ragas.messages", FOREIGN)


def _ragas_samples(schema, messages):
    human, ai, tool, call = messages.HumanMessage, messages.AIMessage, messages.ToolMessage, messages.ToolCall
    first = schema.MultiTurnSample(user_input=[
        human(content="How long is the R2 warranty?"), ai(content="24 months."),
        human(content="And the R1?"),
        ai(content="", tool_calls=[call(name="lookup_warranty", args={"model": "R1"})]),
        tool(content="R1: 12 months"), ai(content="12 months."),
    ], reference="The R1 has a 12-month warranty.", rubrics={"score1": "wrong", "score5": "right"})
    second = schema.MultiTurnSample(user_input=[human(content="Hi?"), ai(content="Hello.")], reference="Hello!")
    return first, second


@pytest.mark.slow  # importing ragas (langchain) takes seconds
def test_ragas_multiturn_samples_load_as_conversations(ragas):
    schema, messages = ragas
    first, second = _ragas_samples(schema, messages)
    for data in ([first, second], schema.EvaluationDataset(samples=[first, second])):
        samples = ragmeter.load_dataset(data).samples
        assert [s.id for s in samples] == ["1#1", "1#2", "2#1"]  # no ids: each conversation its position
        assert [s.question for s in samples] == ["How long is the R2 warranty?", "And the R1?", "Hi?"]
        assert [s.answer for s in samples] == ["24 months.", "12 months.", "Hello."]  # the answer after the tool
        assert [s.reference for s in samples] == [None, "The R1 has a 12-month warranty.", "Hello!"]
        assert samples[1].metadata["history"] == "User: How long is the R2 warranty?\nAssistant: 24 months."
        assert samples[1].metadata["tool_calls"] == [{"name": "lookup_warranty", "args": {"model": "R1"}}]
        assert samples[1].metadata["tool_messages"] == ["R1: 12 months"]
        assert samples[1].metadata["rubrics"] == {"score1": "wrong", "score5": "right"}
