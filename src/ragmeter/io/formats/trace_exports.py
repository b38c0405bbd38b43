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
from datetime import datetime, timezone
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Sample
from ragmeter.io.formats.base import FileFormat
from ragmeter.io.otlp import Rejected, Span, flatten, hex_id, json_spans
from ragmeter.io.traces import KIND, NotRequest, TraceRequest, read_trace, request_samples


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
            read = phoenix_span(span)
            if isinstance(read, str):
                where = f"span {i + 1}: " if len(spans) > 1 else ""
                raise InvalidInputError(where + read, file=file, line=line,
                                        fix="give OTLP/JSON (resourceSpans) or Phoenix's span export")
            out.append(read)
    return out


def phoenix_span(rec: Any) -> Span | str:
    """One span of Phoenix's export, or why it is not one."""
    if not isinstance(rec, Mapping):
        return f"a span must be an object, got {type(rec).__name__}"
    flat = flatten(rec)
    trace, span = hex_id(flat.get("context.trace_id"), 16), hex_id(flat.get("context.span_id"), 8)
    if trace is None or span is None:
        return "context.trace_id / context.span_id are not a trace and a span id"
    parent = flat.get("parent_id")
    parent_id = hex_id(parent, 8) if parent else None
    attrs = {k[len("attributes."):]: v for k, v in flat.items() if k.startswith("attributes.")}
    if isinstance(flat.get("span_kind"), str) and KIND not in attrs:
        attrs[KIND] = flat["span_kind"]
    try:
        start, end = _nanos(flat.get("start_time")), _nanos(flat.get("end_time"))
    except ValueError as exc:
        return str(exc)
    name = flat.get("name")
    return Span(trace, span, parent_id, name if isinstance(name, str) else "", start, end, attrs)


def _nanos(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value * 1e6) if value < 1e14 else int(value)  # milliseconds (a dataframe's) or nanoseconds
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"start_time / end_time must be ISO 8601 times, got {value[:40]!r}") from None
        when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
        return int(when.timestamp() * 1e9)
    raise ValueError(f"start_time / end_time must be ISO 8601 times, got {type(value).__name__}")


def trace_samples(records: Sequence[tuple[int, Any]], file: str) -> list[Sample]:
    """The samples of a trace export (see the module docstring)."""
    spans = read_spans(records, file)
    by_trace: dict[str, list[Span]] = {}
    for s in spans:
        by_trace.setdefault(s.trace_id, []).append(s)
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
                extra[r.id]["history"] = "\n".join(history) or "(none)"
            history.append(f"User: {r.question}")
            if r.answer is not None:
                history.append(f"Assistant: {r.answer}")
    return [extra.get(r.id, {}) for r in requests]


FORMAT = FileFormat("trace exports", recognises, trace_samples)
