"""``io/openinference.py``: what the OpenInference conventions put in a span's attributes, read once
for the trace reader (eval, watch) and the action grader."""

from __future__ import annotations

import doctest
import math

import pytest

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Chunk
from ragmeter.io import openinference
from ragmeter.io.formats.base import content_id
from ragmeter.io.openinference import documents, indexed, kind, messages
from ragmeter.io.otlp import Span


def _span(attrs: dict, name: str = "s") -> Span:
    return Span("t" * 32, "s" * 16, None, name, 0, 0, attrs)


def test_the_examples_in_the_docstrings_hold():
    assert doctest.testmod(openinference).failed == 0


def test_indexed_reads_the_flattened_list_back_in_index_order():
    attrs = {"l.10.f": "ten", "l.2.f": "two", "l.2.g.h": 1, "l.x.f": "not an index", "l.3": "no field",
             "l.-1.f": "negative", "l." + "9" * 12 + ".f": "past nine digits", "other.0.f": "another list"}
    assert indexed(attrs, "l") == [(2, {"f": "two", "g.h": 1}), (10, {"f": "ten"})]
    assert indexed({}, "l") == []


def test_documents_in_index_order_with_scores_and_content_ids():
    span = _span({"retrieval.documents.1.document.content": "second",
                  "retrieval.documents.0.document.id": "a", "retrieval.documents.0.document.content": "first",
                  "retrieval.documents.0.document.score": 2,
                  "retrieval.documents.2.document.metadata": "{}",  # metadata alone: no document
                  "retrieval.documents.3.document.id": 7})
    assert documents(span) == (Chunk("a", 2.0, "first"), Chunk(content_id("second"), None, "second"),
                               Chunk("7", None, None))
    assert documents(_span({"input.value": "q"})) == ()


@pytest.mark.parametrize("attrs,message", [
    ({"retrieval.documents.0.document.content": 3}, "retrieval.documents.0.document.content must be a string, got int"),
    ({"retrieval.documents.4.document.score": 0.5}, "retrieval.documents.4.document has neither an id nor a content"),
    ({"retrieval.documents.0.document.id": True}, "retrieval.documents.0.document.id must be a non-empty string"),
    ({"retrieval.documents.0.document.id": " "}, "retrieval.documents.0.document.id must be a non-empty string"),
    ({"retrieval.documents.0.document.id": "a", "retrieval.documents.0.document.score": math.nan},
     "retrieval.documents.0.document.score must be a finite number, got nan"),
    ({"retrieval.documents.0.document.id": "a", "retrieval.documents.0.document.score": "high"},
     "retrieval.documents.0.document.score must be a finite number, got 'high'"),
])
def test_a_document_of_a_wrong_type_names_the_attribute(attrs, message):
    with pytest.raises(InvalidInputError) as exc:
        documents(_span(attrs))
    assert exc.value.field == "attributes" and exc.value.problem.startswith(message), exc.value.problem


def test_messages_and_their_tool_calls():
    span = _span({"llm.input_messages.1.message.role": "tool", "llm.input_messages.1.message.tool_call_id": "c1",
                  "llm.input_messages.1.message.content": "{}", "llm.input_messages.0.message.role": "user",
                  "llm.input_messages.0.message.content": "hi",
                  "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "lookup"})
    assert messages(span, "input") == [{"role": "user", "content": "hi"},
                                       {"role": "tool", "tool_call_id": "c1", "content": "{}"}]
    (out,) = messages(span, "output")
    assert indexed(out, "tool_calls") == [(0, {"tool_call.function.name": "lookup"})]


def test_kind_in_capitals_or_none():
    assert kind(_span({"openinference.span.kind": "retriever"})) == "RETRIEVER"
    assert kind(_span({})) == ""
