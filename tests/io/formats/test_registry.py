"""``io/formats/registry.py``: the formats registered once, the tables written from them equal to
the ones written by hand before (order included: a clash names the later field), and the
contexts' roles read in one place."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.formats import registry
from ragmeter.io.formats.base import content_id

#: The alias table as io/foreign.py wrote it by hand, in its order.
FORMER_ALIASES = {
    "query_id": "id", "qid": "id", "sample_id": "id",
    "query": "question", "user_input": "question", "input": "question",
    "retrieved_ids": "retrieved", "relevant_ids": "relevant", "relevance": "relevant", "labels": "relevant",
    "context_ids": "context",
    "response": "answer", "actual_output": "answer",
    "reference_answer": "reference", "ground_truth": "reference", "expected_output": "reference",
    "gt_answer": "reference",
}


def test_the_tables_are_the_ones_written_by_hand_before():
    assert list(registry.ALIASES.items()) == list(FORMER_ALIASES.items())
    assert registry.ACCEPTED == (
        "a path to a .jsonl, .json (array or lines), .csv or .parquet file", "a list of dicts", "a pandas DataFrame",
        "a Hugging Face datasets.Dataset", "Ragas samples or an EvaluationDataset",
        "DeepEval test cases (objects with input, actual_output, retrieval_context, ...)",
        "a list of ragmeter Samples", "a ragmeter Dataset")
    assert registry.FORMATS_TRIED[:6] == (
        "ragmeter's (question, retrieved, relevant, answer, reference)",
        "Ragas' (user_input, retrieved_contexts, response, reference)",
        "DeepEval's (input, actual_output, retrieval_context, expected_output)",
        "RAGChecker's (query, response, gt_answer, retrieved_context; a .json file {\"results\": [...]})",
        "a conversation (turns; Ragas user_input messages; DeepEval turns with roles)",
        "MTRAG's tasks (input, contexts, targets, predictions) and conversations (messages)")
    assert registry.HOLDERS == {"samples": "EvaluationDataset", "test_cases": "EvaluationDataset"}


def test_every_format_module_is_registered_once():
    """A format is its module and its line in MODULES: a module left out would never be read."""
    folder = Path(registry.__file__).parent
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__", "base", "registry", "conversations"}
    registered = registry.MODULES + registry.FILE_MODULES
    assert sorted(registered) == sorted(modules) and len(set(registered)) == len(registered)
    assert [f.name for f in registry.FORMATS] == ["ragmeter", "ragas", "deepeval", "ragchecker", "conversation",
                                                  "mtrag", "openinference", "samples"]


def test_conversation_shapes_are_tried_from_the_most_specific():
    shapes = {fmt.name: c for fmt in registry.FORMATS for c in fmt.conversations}
    assert registry.CONVERSATIONS == (shapes["mtrag"], shapes["deepeval"], shapes["conversation"], shapes["ragas"])
    roles = {"id": "d", "turns": [{"role": "user", "content": "Q?"}]}
    assert registry.conversation_of(roles) is shapes["deepeval"]
    assert registry.conversation_of({"turns": [{"question": "Q?"}]}) is shapes["conversation"]
    assert registry.conversation_of({"user_input": "a question"}) is None and not registry.is_conversational([])


def test_retrieved_ids_go_with_the_texts_and_relevant_ids_win_over_texts():
    row = {"retrieved_contexts": ["a", "b"], "retrieved_context_ids": ["1", "2"],
           "reference_context_ids": ["2"], "reference_contexts": ["b"]}
    assert registry.native_fields(row) == {"retrieved": [{"id": "1", "text": "a"}, {"id": "2", "text": "b"}],
                                           "relevant": ["2"]}
    with pytest.raises(InvalidInputError, match=r'has 1 ids for 2 texts in "retrieved_contexts"'):
        registry.native_fields({**row, "retrieved_context_ids": ["1"]})


def test_a_context_field_is_a_formats_only_beside_the_field_it_goes_with():
    """DeepEval's ``context`` is its ideal context beside ``retrieval_context``; alone, ragmeter's ids."""
    mine = {"question": "q", "context": ["c1"], "retrieved_contexts": None}
    assert registry.native_fields(mine) == mine  # nothing read: kept as it is
    deepeval = registry.native_fields({"retrieval_context": ["a", "b"], "context": ["b"]})
    assert deepeval == {"retrieved": [{"id": content_id("a"), "text": "a"}, {"id": content_id("b"), "text": "b"}],
                        "relevant": [content_id("b")]}
    with pytest.raises(InvalidInputError, match=r'"retrieval_context" and "retrieved_contexts" both give "retrieved"'):
        registry.native_fields({"retrieved_contexts": ["a"], "retrieval_context": ["a"]})
