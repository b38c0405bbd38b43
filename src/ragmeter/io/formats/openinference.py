"""OpenInference spans (OpenTelemetry traces of LLM applications, Arize's semantic conventions)
exported to JSON one span per record, each span a request by itself: one sample per span with
``input.value`` (:func:`ragmeter.io.traces.span_request`, which ``watch`` reads a log of spans with
too). Its id is the span's id (``span_id`` or ``context.span_id``), the question ``input.value``,
the answer ``output.value``, the ranked list ``retrieval.documents.<i>.document.id`` / ``.content``
/ ``.score`` in the order of ``<i>`` (a document without an id gets the content-hash id of a
context given as text). Attributes come flattened (``{"input.value": "..."}``), nested, or as
OTLP JSON's list (``[{"key": "input.value", "value": {"stringValue": "..."}}]``).

A file of a trace's spans (OpenTelemetry ids, several spans per request) is read whole instead:
:mod:`ragmeter.io.formats.trace_exports`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.io.formats.base import Format, RecordReader
from ragmeter.io.traces import is_span_request, span_request


def _row(span: Mapping[str, Any]) -> dict[str, Any]:
    """A request span as a ragmeter record."""
    got = span_request(span)
    retrieved = []
    for c in got.documents:
        chunk: dict[str, Any] = {"id": c.id}
        if c.text is not None:
            chunk["text"] = c.text
        if c.score is not None:
            chunk["score"] = c.score
        retrieved.append(chunk)
    row: dict[str, Any] = {"id": got.id, "question": got.question, "retrieved": retrieved}
    if got.answer is not None:
        row["answer"] = got.answer
    return row


FORMAT = Format(
    name="openinference",
    tried="OpenInference spans (attributes input.value, output.value, retrieval.documents)",
    record=RecordReader(is_span_request, _row),
)
