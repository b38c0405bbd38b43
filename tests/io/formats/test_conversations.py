"""Conversation objects built by the real libraries load as conversations (one sample per turn):
Ragas ``MultiTurnSample`` (alone and in an ``EvaluationDataset``) and DeepEval
``ConversationalTestCase``. Refused before with "a conversation needs an id".

The libraries are test-only and installed without their dependency trees (the pip line in
tests/requirements-foreign.txt); without them these tests skip with that line (and fail under
RAGMETER_CI=1)."""

from __future__ import annotations

import json

import pytest

import ragmeter
from ragmeter.core.errors import InvalidInputError
from ragmeter.io.foreign import content_id
from tests.installed import need

INSTALL = "pip install --no-deps -r tests/requirements-foreign.txt"


@pytest.fixture
def ragas(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGAS_DO_NOT_TRACK", "true")
    monkeypatch.chdir(tmp_path)
    return need("ragas.dataset_schema", INSTALL), need("ragas.messages", INSTALL)


@pytest.fixture
def deepeval(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
    monkeypatch.setenv("DEEPEVAL_CACHE_FOLDER", str(tmp_path / ".deepeval"))
    monkeypatch.chdir(tmp_path)  # deepeval makes its folder where it is imported
    return need("deepeval.test_case", INSTALL)


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


def test_some_conversations_with_ids_and_some_without_is_refused():
    rows = [{"id": "c1", "turns": [{"question": "Q?"}]}, {"turns": [{"question": "R?"}]}]
    with pytest.raises(InvalidInputError, match=r'row 2, field "id": a conversation needs an id'):
        ragmeter.load_dataset(rows)


NATIVE = {"id": "c1", "turns": [
    {"question": "How long is the R2 warranty?", "retrieved": ["w2", "w1"], "relevant": ["w2"],
     "answer": "24 months."},
    {"question": "And the other one?", "retrieved": ["w2", "w1"], "relevant": ["w1"], "answer": "12 months.",
     "standalone": False},
    {"question": "Can I get the R3 in blue?", "retrieved": ["x"], "relevant": {}, "answerable": False,
     "answer": "I don't know."},
]}


def write(tmp_path, *records):
    p = tmp_path / "conv.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return p


def test_turns_become_samples_with_history(tmp_path):
    data = ragmeter.load_dataset(write(tmp_path, NATIVE))
    assert [s.id for s in data] == ["c1#1", "c1#2", "c1#3"]
    second = data.samples[1]
    assert second.metadata["turn"] == 2 and second.metadata["standalone"] is False
    assert second.metadata["history"] == "User: How long is the R2 warranty?\nAssistant: 24 months."
    assert data.samples[2].answerable is False
    r = ragmeter.evaluate(data, ["reciprocal_rank"])
    assert r.values("reciprocal_rank@5") == [1.0, 0.5, None]


def test_deepeval_ragas_and_mtrag_shapes(tmp_path):
    deepeval = {"id": "d", "turns": [
        {"role": "user", "content": "Q1?"}, {"role": "assistant", "content": "A1.", "retrieval_context": ["t1", "t2"]},
        {"role": "user", "content": "Q2?"}, {"role": "assistant", "content": "A2.", "retrieval_context": []}]}
    ragas = {"id": "r", "user_input": [{"type": "human", "content": "Hi?"}, {"type": "ai", "content": "Hello."}],
             "reference": "Hello there."}
    # MTRAG tasks as the benchmark writes them (the invented "turn_id"/"messages" rows are gone: a
    # "messages" record is a whole MTRAG conversation); the gold "targets" are the reference, not
    # the answer (tests/io/test_mtrag.py reads the published file)
    mtrag = [{"conversation_id": "m", "task_id": "m::2", "turn": 2,
              "input": [{"speaker": "user", "text": "First?"}, {"speaker": "agent", "text": "One."},
                        {"speaker": "user", "text": "Second?"}],
              "contexts": [{"document_id": "doc9", "text": "Nine."}], "targets": [{"text": "Two."}],
              "answerability": ["UNANSWERABLE"]},
             {"conversation_id": "m", "task_id": "m::1", "turn": 1, "input": [{"speaker": "user", "text": "First?"}],
              "contexts": [], "predictions": [{"text": "One."}]}]
    data = ragmeter.load_dataset(write(tmp_path, deepeval, ragas, *mtrag))
    by_id = {s.id: s for s in data}
    assert by_id["d#1"].answer == "A1." and by_id["d#1"].retrieved[1].text == "t2"
    assert by_id["r#1"].reference == "Hello there."
    assert by_id["m::1"].question == "First?" and by_id["m::2"].question == "Second?"
    assert by_id["m::2"].answerable is False and by_id["m::2"].retrieved_ids == ("doc9",)
    assert by_id["m::2"].answer is None and by_id["m::2"].reference == "Two."
    assert by_id["m::1"].answer == "One." and "Assistant: One." in by_id["m::2"].metadata["history"]
