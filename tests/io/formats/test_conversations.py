"""Records that hold several samples, read into one per sample: conversations need an id or none
do, and every shape (DeepEval's, Ragas', MTRAG's) in one file."""

from __future__ import annotations

import json

import pytest

import ragmeter
from ragmeter.core.errors import InvalidInputError


def test_some_conversations_with_ids_and_some_without_is_refused():
    rows = [{"id": "c1", "turns": [{"question": "Q?"}]}, {"turns": [{"question": "R?"}]}]
    with pytest.raises(InvalidInputError, match=r'row 2, field "id": a conversation needs an id'):
        ragmeter.load_dataset(rows)


def write(tmp_path, *records):
    p = tmp_path / "conv.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return p


def test_deepeval_ragas_and_mtrag_shapes(tmp_path):
    deepeval = {"id": "d", "turns": [
        {"role": "user", "content": "Q1?"}, {"role": "assistant", "content": "A1.", "retrieval_context": ["t1", "t2"]},
        {"role": "user", "content": "Q2?"}, {"role": "assistant", "content": "A2.", "retrieval_context": []}]}
    ragas = {"id": "r", "user_input": [{"type": "human", "content": "Hi?"}, {"type": "ai", "content": "Hello."}],
             "reference": "Hello there."}
    # MTRAG tasks as the benchmark writes them (the invented "turn_id"/"messages" rows are gone: a
    # "messages" record is a whole MTRAG conversation); the gold "targets" are the reference, not
    # the answer (tests/io/formats/test_mtrag.py reads the published file)
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
