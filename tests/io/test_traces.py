"""A trace read as a RAG request: spans made by the OpenTelemetry SDK with the OpenInference
conventions, and by a real OpenInference instrumentation (LangChain, with a fake chat model)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Chunk
from ragmeter.io.formats.base import content_id
from ragmeter.io.otlp import json_spans
from ragmeter.io.traces import (
    NotRequest,
    SpanRequest,
    TraceRequest,
    group_traces,
    is_span_request,
    read_trace,
    request_samples,
    span_request,
)
from tests.hostile import FUZZ, VALUE
from tests.installed import need
from tests.otel_traces import otlp_json, rag_trace, recorded

A = [("a", "Refunds take 5 days.", 0.9), ("b", "Shipping is free.", 0.4)]
B = [("c", "Returns need a receipt.", 0.7), ("a", "Refunds take 5 days.", 0.6)]


def _read(exporter) -> dict[str, TraceRequest | NotRequest]:
    spans = list(json_spans(otlp_json(exporter.get_finished_spans())))
    return {t: read_trace(s) for t, s in group_traces(spans).items()}


def test_one_retrieval_reads_question_documents_and_answer():
    tracer, exporter = recorded()
    tid = rag_trace(tracer, "How long do refunds take?", [A], "Five days.", session="s1")
    req = _read(exporter)[tid]
    assert isinstance(req, TraceRequest)
    assert (req.id, req.question, req.answer) == (tid, "How long do refunds take?", "Five days.")
    assert [r.chunks for r in req.retrievals] == [(Chunk("a", 0.9, "Refunds take 5 days."),
                                                   Chunk("b", 0.4, "Shipping is free."))]
    assert req.metadata["session"] == "s1"
    (s,) = request_samples(req)
    assert s.id == tid and s.answer == "Five days." and s.answer_context is None
    assert s.metadata["root_span_id"] == req.root_span_id and s.metadata["retrievals"] == 1


def test_two_retrievals_are_two_samples_the_answer_scored_once_against_both():
    tracer, exporter = recorded()
    tid = rag_trace(tracer, "Refund rules?", [A, B], "Five days, with a receipt.")
    first, second = request_samples(_read(exporter)[tid])
    assert (first.id, second.id) == (f"{tid}#1", f"{tid}#2")
    assert first.retrieved_ids == ("a", "b") and second.retrieved_ids == ("c", "a")
    assert first.question == second.question == "Refund rules?"
    assert first.answer is None and first.metadata["answer_on"] == f"{tid}#2"
    assert second.answer == "Five days, with a receipt."
    # what the answer read: every retrieval's chunks, each once, in order
    assert second.answer_context_ids == ("a", "b", "c")
    assert second.metadata["query"] == "Refund rules? (again)"


def test_a_document_without_id_gets_the_content_hash_id():
    tracer, exporter = recorded()
    tid = rag_trace(tracer, "q?", [[(None, "only text", None)]], "a")
    req = _read(exporter)[tid]
    assert req.retrievals[0].chunks == (Chunk(content_id("only text"), None, "only text"),)


def test_no_retriever_is_not_a_request_and_a_bad_document_is_malformed():
    tracer, exporter = recorded()
    plain = rag_trace(tracer, "q?", [], "a")
    bad = rag_trace(tracer, "q?", [[(None, None, 0.5)]], "a")
    out = _read(exporter)
    assert out[plain] == NotRequest("no RETRIEVER span (not a RAG request)")
    assert out[bad].malformed and "retrieval.documents.0.document has neither an id nor a content" in out[bad].reason


def test_the_llm_span_gives_question_and_answer_when_the_root_has_none():
    tracer, exporter = recorded()
    root = tracer.start_span("request")  # a web framework's span: no input.value
    from opentelemetry import trace

    from tests.otel_traces import KIND, docs

    ctx = trace.set_span_in_context(root)
    with tracer.start_as_current_span("r", context=ctx) as r:
        r.set_attribute(KIND, "RETRIEVER")
        docs(r, A)
    with tracer.start_as_current_span("llm", context=ctx) as llm:
        llm.set_attribute(KIND, "LLM")
        for i, (role, text) in enumerate([("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello"),
                                          ("user", "Refunds?")]):
            llm.set_attribute(f"llm.input_messages.{i}.message.role", role)
            llm.set_attribute(f"llm.input_messages.{i}.message.content", text)
        llm.set_attribute("llm.output_messages.0.message.role", "assistant")
        llm.set_attribute("llm.output_messages.0.message.content", "Five days.")
    root.end()
    req = _read(exporter)[format(root.get_span_context().trace_id, "032x")]
    assert (req.question, req.answer) == ("Refunds?", "Five days.")
    assert req.metadata["history"] == "User: Hi\nAssistant: Hello"  # the conversation so far


def test_a_retriever_listing_a_chunk_twice_counts_it_at_its_first_rank():
    tracer, exporter = recorded()
    tid = rag_trace(tracer, "q?", [[("a", "first", 0.9), ("b", "b", 0.5), ("a", "again", 0.1)]], "x")
    assert _read(exporter)[tid].retrievals[0].chunks == (Chunk("a", 0.9, "first"), Chunk("b", 0.5, "b"))


@pytest.mark.parametrize("record,expected", [
    ({"attributes": {"input.value": "q"}}, True),
    ({"attributes": {"input": {"value": "q"}}}, True),
    ({"attributes": [{"key": "input.value", "value": {"stringValue": 7}}]}, True),  # its value checked later
    ({"attributes.input.value": "q", "context.span_id": "s"}, True),
    ({"attributes": {"output.value": "a"}}, False),
    ({"attributes": "nonsense"}, False),
    ({"question": "q"}, False),
    ([1], False),
])
def test_a_span_that_holds_a_request_by_itself(record, expected):
    assert is_span_request(record) is expected


def test_span_request_reads_the_id_time_question_answer_and_documents():
    span = {"context": {"trace_id": "t1", "span_id": "s1"}, "start_time": "2023-11-14T22:13:20Z",
            "attributes": {"input.value": "q?", "output.value": "a.", "retrieval.documents.0.document.id": "d",
                           "retrieval.documents.0.document.score": 0.5}}
    assert span_request(span) == SpanRequest("s1", 1.7e9, "q?", "a.", (Chunk("d", 0.5, None),))
    assert span_request({**span, "start_time": None, "startTimeUnixNano": 1_700_000_000_000_000_000}).ts == 1.7e9
    for bad, field, words in (({**span, "start_time": "yesterday"}, "start_time", "ISO 8601"),
                              ({**span, "attributes": [{"key": "input.value", "value": {"stringValue": 7}}]},
                               "attributes", "attribute 'input.value': stringValue must be a string"),
                              ({**span, "context": {}}, "span_id", "a span needs a span_id")):
        with pytest.raises(InvalidInputError, match=words) as exc:
            span_request(bad)
        assert exc.value.field == field


@pytest.mark.slow
def test_a_real_langchain_instrumentation_trace():
    """LangChain's retriever and fake chat model, traced by openinference-instrumentation-langchain."""
    need("openinference.instrumentation.langchain")
    need("langchain_core")
    from langchain_core.documents import Document
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnablePassthrough
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    class Shelf(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager=None):
            return [Document("Refunds take 5 days.", id="refunds"), Document("Shipping is free.", id="shipping")]

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        chain = ({"context": Shelf(), "question": RunnablePassthrough()}
                 | ChatPromptTemplate.from_template("Context: {context}\nQuestion: {question}")
                 | FakeListChatModel(responses=["Refunds take five days."]) | StrOutputParser())
        assert chain.invoke("How long do refunds take?") == "Refunds take five days."
    finally:
        instrumentor.uninstrument()
    (req,) = _read(exporter).values()
    assert (req.question, req.answer) == ("How long do refunds take?", "Refunds take five days.")
    # LangChain's instrumentation records contents, not ids: the chunks get content-hash ids
    assert [(c.id, c.text) for c in req.retrievals[0].chunks] == [
        (content_id("Refunds take 5 days."), "Refunds take 5 days."),
        (content_id("Shipping is free."), "Shipping is free.")]


SPAN_KEYS = ["span_id", "trace_id", "spanId", "traceId", "context", "parent_id", "name", "start_time",
             "startTimeUnixNano", "end_time", "span_kind", "attributes", "attributes.input.value"]


@FUZZ
@given(st.dictionaries(st.sampled_from(SPAN_KEYS), VALUE, max_size=6),
       st.dictionaries(st.sampled_from(["input.value", "output.value", "retrieval.documents.0.document.id",
                                        "retrieval.documents.0.document.content", "retrieval.documents.x.document.id",
                                        "retrieval.documents.0.document.score"]), VALUE, max_size=4),
       st.booleans())
def test_a_hostile_span_is_a_request_or_a_typed_error(record, attrs, as_list):
    """Whatever a span line holds, the one-span reader returns a request or names what is wrong."""
    from ragmeter.io.otlp import Rejected, Span, span_from_json

    record = {**record, "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()] if as_list
              else {**attrs, "input.value": attrs.get("input.value", "q")}}
    for hex_ids in (True, False):
        assert isinstance(span_from_json(record, hex_ids=hex_ids), (Span, Rejected))
    assert isinstance(is_span_request(record), bool)
    try:
        got = span_request(record)
    except InvalidInputError as exc:
        assert exc.problem
    else:
        assert isinstance(got.question, str) and math.isfinite(got.ts) and got.ts >= 0
