"""RAG traces made by the real client: the OpenTelemetry SDK with the OpenInference semantic
conventions, encoded by the OTLP exporter's own encoder (protobuf) and, for OTLP/JSON, by
protobuf's JSON mapping with the ids in hex as the OTLP spec (and the Collector's file exporter)
writes them."""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from typing import Any

from tests.installed import need

for _module in ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http.trace_exporter",
                "openinference.semconv.trace"):
    need(_module)

from openinference.semconv.trace import DocumentAttributes, MessageAttributes, SpanAttributes  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND


def docs(span: Any, chunks: Sequence[tuple[str | None, str | None, float | None]]) -> None:
    """Set a retriever span's documents: (id, content, score), None for one left out."""
    for j, (cid, text, score) in enumerate(chunks):
        p = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{j}."
        if cid is not None:
            span.set_attribute(p + DocumentAttributes.DOCUMENT_ID, cid)
        if text is not None:
            span.set_attribute(p + DocumentAttributes.DOCUMENT_CONTENT, text)
        if score is not None:
            span.set_attribute(p + DocumentAttributes.DOCUMENT_SCORE, score)


def rag_trace(tracer: Any, question: str, retrievals: Sequence[Sequence[tuple[str | None, str | None, float | None]]],
              answer: str | None, *, session: str | None = None, finish: bool = True) -> str:
    """One RAG request as a chain: root CHAIN span (question in, answer out), a RETRIEVER span per
    retrieval, an LLM span; returns the trace id (hex). ``finish=False`` leaves the root open
    (only the children end: an unfinished trace)."""
    root = tracer.start_span("rag")
    root.set_attribute(KIND, "CHAIN")
    root.set_attribute(SpanAttributes.INPUT_VALUE, question)
    if session:
        root.set_attribute(SpanAttributes.SESSION_ID, session)
    from opentelemetry import trace

    ctx = trace.set_span_in_context(root)
    for i, chunks in enumerate(retrievals):
        with tracer.start_as_current_span(f"retrieve-{i + 1}", context=ctx) as r:
            r.set_attribute(KIND, "RETRIEVER")
            r.set_attribute(SpanAttributes.INPUT_VALUE, question if i == 0 else f"{question} (again)")
            docs(r, chunks)
    with tracer.start_as_current_span("llm", context=ctx) as llm:
        llm.set_attribute(KIND, "LLM")
        llm.set_attribute(f"{SpanAttributes.LLM_INPUT_MESSAGES}.0.{MessageAttributes.MESSAGE_ROLE}", "user")
        llm.set_attribute(f"{SpanAttributes.LLM_INPUT_MESSAGES}.0.{MessageAttributes.MESSAGE_CONTENT}", question)
        if answer is not None:
            llm.set_attribute(f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.0.{MessageAttributes.MESSAGE_ROLE}", "assistant")
            llm.set_attribute(f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.0.{MessageAttributes.MESSAGE_CONTENT}", answer)
    if answer is not None:
        root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
    if finish:
        root.end()
    return format(root.get_span_context().trace_id, "032x")


def recorded() -> tuple[Any, InMemorySpanExporter]:
    """A tracer whose ended spans are kept in memory."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("ragmeter-tests"), exporter


def protobuf_request(spans: Sequence[ReadableSpan]) -> bytes:
    """The ExportTraceServiceRequest the OTLP exporter would send for ``spans``."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return encode_spans(spans).SerializeToString()


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """The same request as OTLP/JSON: protobuf's JSON mapping, ids turned from base64 to hex."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    out = MessageToDict(encode_spans(spans))
    for r in out["resourceSpans"]:
        for s in r["scopeSpans"]:
            for span in s["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return out


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on now (an OTLP receiver restarted on it keeps its address)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int, timeout: float = 60.0) -> None:
    """Wait (at most ``timeout`` seconds) until something listens on 127.0.0.1:``port``."""
    import socket
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f} s")


#: how the tests reach an OTLP endpoint without a proxy in the way
os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
