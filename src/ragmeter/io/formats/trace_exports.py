"""Trace exports read as a dataset: one RAG request per trace, one sample per retrieval.

Two exports are recognised (any record of the file being one of them):

- **OTLP/JSON**, as the OpenTelemetry Collector's file exporter writes it: one
  ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``) per line, or one per file;
- **Phoenix's span export**: the spans its client returns (``client.spans.get_spans(...)``, its REST
  API's ``{"data": [...]}``), one per line or as a JSON array: ``{"name", "context": {"trace_id",
  "span_id"}, "parent_id", "span_kind", "start_time", "attributes"}``, attributes nested or dotted;
  and its spans dataframe saved as records (``context.span_id``, ``attributes.input.value``, ...).

Each trace is read by :func:`ragmeter.io.traces.read_trace` (question, answer, retrievals); a
trace with no retriever is left out (the file must hold at least one RAG request). Requests of one
session (``session.id``), in time order, are a conversation: each gets metadata ``conversation``,
``turn`` and ``history`` (the earlier questions and answers), unless its LLM span carried the
history itself. A span or trace that cannot be read is an ``InvalidInputError`` naming the file,
the line, the trace and what is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.history import TurnHistory
from ragmeter.core.sample import Sample
from ragmeter.io.formats.base import FileFormat
from ragmeter.io.otlp import Rejected, Span, hex_id, json_spans, span_from_json
from ragmeter.io.traces import NotRequest, TraceRequest, group_traces, read_trace, request_samples


def _is_otlp(rec: Any) -> bool:
    return isinstance(rec, Mapping) and ("resourceSpans" in rec or "resource_spans" in rec)


def _is_phoenix(rec: Any) -> bool:
    """A span of Phoenix's export: a trace id and a span id as OpenTelemetry writes them (a file of
    spans with other ids is one request per span: :mod:`ragmeter.io.formats.openinference`)."""
    if not isinstance(rec, Mapping):
        return False
    ctx = rec.get("context")
    trace, span = (ctx.get("trace_id"), ctx.get("span_id")) if isinstance(ctx, Mapping) else \
        (rec.get("context.trace_id"), rec.get("context.span_id"))
    return hex_id(trace, 16) is not None and hex_id(span, 8) is not None


def recognises(records: Sequence[tuple[int, Any]]) -> bool:
    """Whether the records are a trace export (see the module docstring)."""
    for _, rec in records[:50]:
        if _is_otlp(rec) or _is_phoenix(rec):
            return True
        if isinstance(rec, Mapping) and isinstance(rec.get("data"), list) and any(map(_is_phoenix, rec["data"][:5])):
            return True
    return False


def read_spans(records: Sequence[tuple[int, Any]], file: str) -> list[Span]:
    """Every span of the export, or an ``InvalidInputError`` for the first that cannot be read."""
    out: list[Span] = []
    for line, rec in records:
        if _is_otlp(rec):
            try:
                items = list(json_spans(rec))
            except InvalidInputError as exc:
                raise InvalidInputError(exc.problem, file=file, line=line, field=exc.field, fix=exc.fix) from None
            for item in items:
                if isinstance(item, Rejected):
                    raise InvalidInputError(f"a span cannot be read: {item.reason}", file=file, line=line,
                                            record=item.trace_id, field="resourceSpans")
                out.append(item)
            continue
        spans = rec["data"] if isinstance(rec, Mapping) and isinstance(rec.get("data"), list) else [rec]
        for i, span in enumerate(spans):
            read = span_from_json(span)
            if isinstance(read, Rejected):
                where = f"span {i + 1}: " if len(spans) > 1 else ""
                raise InvalidInputError(where + read.reason, file=file, line=line, record=read.trace_id,
                                        field=read.field, fix="give OTLP/JSON (resourceSpans) or Phoenix's span export")
            out.append(read)
    return out


def trace_samples(records: Sequence[tuple[int, Any]], file: str) -> list[Sample]:
    """The samples of a trace export (see the module docstring)."""
    by_trace = group_traces(read_spans(records, file))
    requests: list[TraceRequest] = []
    skipped = 0
    for trace, group in by_trace.items():
        req = read_trace(group)
        if isinstance(req, NotRequest):
            if req.malformed:
                raise InvalidInputError(req.reason, file=file, record=trace, field="spans")
            skipped += 1
            continue
        requests.append(req)
    if not requests:
        raise InvalidInputError(f"no RAG request among its {len(by_trace)} trace(s): none has a RETRIEVER span "
                                "(openinference.span.kind)", file=file,
                                fix="export traces of an app instrumented with OpenInference")
    return [s for req, extra in zip(requests, _conversations(requests)) for s in request_samples(req, extra=extra)]


def _conversations(requests: Sequence[TraceRequest]) -> list[dict[str, Any]]:
    """Per request: ``conversation``, ``turn`` and ``history`` from the earlier requests of its session."""
    by_session: dict[str, list[TraceRequest]] = {}
    for r in requests:
        if "session" in r.metadata:
            by_session.setdefault(str(r.metadata["session"]), []).append(r)
    extra: dict[str, dict[str, Any]] = {}
    for session, turns in by_session.items():
        history: list[str] = []
        for n, r in enumerate(sorted(turns, key=lambda t: (t.ts, t.id)), start=1):
            extra[r.id] = {"conversation": session, "turn": n}
            if "history" not in r.metadata:
                extra[r.id]["history"] = TurnHistory(history, len(history))  # the session's lines, stored once
            history.append(f"User: {r.question}")
            if r.answer is not None:
                history.append(f"Assistant: {r.answer}")
    return [extra.get(r.id, {}) for r in requests]


FORMAT = FileFormat("trace exports", recognises, trace_samples)
