"""OpenInference spans (OpenTelemetry traces of LLM applications, Arize's semantic conventions),
as exported to JSON: the one reader of ``eval`` (a file of spans), ``watch`` (a request log of
spans) and the action grader (a trace's tool calls, :mod:`ragmeter.actions.readers`).

A span's attributes come flattened (``{"input.value": "..."}``) or as OTLP JSON's list
(``[{"key": "input.value", "value": {"stringValue": "..."}}]``). A span with ``input.value`` is
one sample: its id the ``span_id`` (or ``context.span_id``), the question ``input.value``, the
answer ``output.value``, the retrieved chunks ``retrieval.documents.<i>.document.id`` /
``.content`` in the order of ``<i>`` (a document without an id is ``doc-<i>``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.formats.base import Format, RecordReader

_DOC = re.compile(r"retrieval\.documents\.(\d+)\.document\.(id|content)$")


def attributes(span: Mapping[str, Any]) -> dict[str, Any]:
    """The span's attributes as one flat dict (OTLP's list of ``{"key", "value"}`` read too)."""
    attrs = span.get("attributes") or {}
    if isinstance(attrs, Mapping):
        return dict(attrs)
    out: dict[str, Any] = {}
    for kv in attrs if isinstance(attrs, list) else []:  # OTLP JSON: [{"key": k, "value": {"stringValue": v}}]
        if isinstance(kv, Mapping) and "key" in kv:
            value = kv.get("value") or {}
            out[kv["key"]] = next(iter(value.values()), None) if isinstance(value, Mapping) else value
    return out


def start_time(span: Mapping[str, Any]) -> float:
    """When the span started, in seconds (nanoseconds and ISO 8601 read; 0 when not given)."""
    ts = span.get("start_time", span.get("startTimeUnixNano", span.get("start_time_unix_nano")))
    if isinstance(ts, (int, float)):
        return float(ts) / (1e9 if ts > 1e14 else 1.0)
    if isinstance(ts, str):
        if ts.isdigit():
            return int(ts) / 1e9
        try:
            return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return 0.0
    return 0.0


def is_request(record: Mapping[str, Any]) -> bool:
    """A span that is a request to score: its attributes have ``input.value``."""
    return isinstance(record, Mapping) and "input.value" in attributes(record)


@dataclass(frozen=True)
class Request:
    """What a request span holds: its id, question, answer and retrieved (id, text) pairs."""

    id: str
    question: str
    answer: str | None
    documents: tuple[tuple[str, str | None], ...]


def request(span: Mapping[str, Any]) -> Request:
    """The request a span holds; what it holds of the wrong type is an ``InvalidInputError``
    naming the field (``attributes`` or ``span_id``)."""
    attrs = attributes(span)
    docs: dict[int, dict] = {}
    for key, value in attrs.items():
        m = _DOC.match(key)
        if m:
            docs.setdefault(int(m.group(1)[:9]), {})[m.group(2)] = value
    documents = []
    for i, d in sorted(docs.items()):
        cid, content = d.get("id", f"doc-{i}"), d.get("content")
        if isinstance(cid, bool) or not isinstance(cid, (str, int)):
            raise InvalidInputError(f"document {i} id must be a string, got {_kind(cid)}", field="attributes")
        if content is not None and not isinstance(content, str):
            raise InvalidInputError(f"document {i} content must be a string, got {_kind(content)}",
                                    field="attributes")
        documents.append((str(cid), content))
    context = span.get("context")
    span_id = span.get("span_id") or (context.get("span_id") if isinstance(context, dict) else None)
    if isinstance(span_id, bool) or not isinstance(span_id, (str, int)) or not str(span_id).strip():
        raise InvalidInputError("a span needs a span_id", field="span_id")
    question, answer = attrs["input.value"], attrs.get("output.value")
    if not isinstance(question, str):
        raise InvalidInputError(f"input.value must be a string, got {_kind(question)}", field="attributes")
    if answer is not None and not isinstance(answer, str):
        raise InvalidInputError(f"output.value must be a string, got {_kind(answer)}", field="attributes")
    return Request(str(span_id), question, answer, tuple(documents))


def _row(span: Mapping[str, Any]) -> dict[str, Any]:
    """A request span as a ragmeter record."""
    got = request(span)
    row: dict[str, Any] = {"id": got.id, "question": got.question,
                           "retrieved": [{"id": cid} if text is None else {"id": cid, "text": text}
                                         for cid, text in got.documents]}
    if got.answer is not None:
        row["answer"] = got.answer
    return row


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


FORMAT = Format(
    name="openinference",
    tried="OpenInference spans (attributes input.value, output.value, retrieval.documents)",
    record=RecordReader(is_request, _row),
)
