"""OpenTelemetry spans, as OTLP carries them, read into plain :class:`Span` values.

Two encodings of one message, ``ExportTraceServiceRequest`` (``resourceSpans`` ->
``scopeSpans`` -> ``spans``): OTLP/JSON, as an exporter posts it and as the Collector's file
exporter writes it (one request per line), and OTLP/protobuf, decoded by ``opentelemetry-proto``
(``pip install 'ragmeter[otel]'``). The JSON mapping follows the OTLP specification: trace and
span ids in hex (base64, protobuf's own JSON mapping, is read too), 64-bit integers as strings
or numbers, keys in lowerCamelCase (snake_case accepted), attributes as ``[{"key", "value":
{"stringValue" | "intValue" | "doubleValue" | "boolValue" | "arrayValue" | "kvlistValue" |
"bytesValue": ...}}]``.

A span that is not one (no valid trace or span id, a time that is not a number, attributes that
are not key/value pairs) is a :class:`Rejected` with the reason, never an exception: the
receiver quarantines it and counts it in the response's ``partialSuccess``. A body that is not
an ``ExportTraceServiceRequest`` at all raises :class:`~ragmeter.core.errors.InvalidInputError`.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter.core.errors import InvalidInputError


@dataclass(frozen=True)
class Span:
    """One span: ids in lowercase hex (``parent_id`` None for a root), times in nanoseconds
    since the epoch, attributes flattened to dotted keys (``retrieval.documents.0.document.id``)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"trace_id": self.trace_id, "span_id": self.span_id, "parent_id": self.parent_id, "name": self.name,
                "start_ns": self.start_ns, "end_ns": self.end_ns, "attributes": dict(self.attributes)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Span:
        """The inverse of :meth:`as_dict` (for spans this module wrote)."""
        return cls(d["trace_id"], d["span_id"], d["parent_id"], d["name"], d["start_ns"], d["end_ns"],
                   d["attributes"])


@dataclass(frozen=True)
class Rejected:
    """A span that cannot be read, why, and what was sent (for the quarantine file)."""

    reason: str
    span: Any
    trace_id: str | None = None
    span_id: str | None = None


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested attribute objects (``{"retrieval": {"documents": [{"document": {"id": "a"}}]}}``, as
    Phoenix returns them) as dotted keys (``retrieval.documents.0.document.id``); a list of scalars
    stays a list.

    >>> flatten({"input": {"value": "q"}, "retrieval": {"documents": [{"document": {"id": "a"}}]}, "tags": [1, 2]})
    {'input.value': 'q', 'retrieval.documents.0.document.id': 'a', 'tags': [1, 2]}
    """
    out = {} if out is None else out
    if isinstance(value, Mapping):
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and any(isinstance(v, (Mapping, list)) for v in value):
        for i, v in enumerate(value):
            flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value
    return out


def hex_id(value: Any, size: int) -> str | None:
    """A trace (16 bytes) or span (8 bytes) id as lowercase hex: from hex (OTLP/JSON), base64
    (protobuf's JSON mapping) or bytes; None when it is not one (an all-zero id is invalid too).

    >>> hex_id("5B8EFFF798038103D269B633813FC60C", 16)
    '5b8efff798038103d269b633813fc60c'
    >>> hex_id("W47/95gDgQPSabYzgT/GDA==", 16)
    '5b8efff798038103d269b633813fc60c'
    >>> hex_id("00000000000000000000000000000000", 16) is None
    True
    """
    raw: bytes | None = None
    if isinstance(value, (bytes, bytearray)):
        raw = bytes(value)
    elif isinstance(value, str):
        text = value.strip()
        if len(text) == 2 * size:
            try:
                raw = bytes.fromhex(text)
            except ValueError:
                raw = None
        if raw is None:
            try:
                raw = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                raw = None
    if raw is None or len(raw) != size or not any(raw):
        return None
    return raw.hex()


def _nanos(value: Any, what: str) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        raise ValueError(f"{what} must be nanoseconds since the epoch, got a boolean")
    if isinstance(value, str):
        if not value.strip().isdigit():
            raise ValueError(f"{what} must be nanoseconds since the epoch, got {value[:40]!r}")
        return int(value)
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{what} must not be negative")
        return value
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        return int(value)
    raise ValueError(f"{what} must be nanoseconds since the epoch, got {type(value).__name__}")


def any_value(value: Any) -> Any:
    """An OTLP/JSON ``AnyValue`` as a Python value (a kvlist as a dict, bytes as base64 text)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"an attribute value must be an AnyValue object, got {type(value).__name__}")
    if not value:
        return None
    kind, inner = next(iter(value.items()))
    kind = _CAMEL.get(kind, kind)
    if kind == "stringValue":
        if not isinstance(inner, str):
            raise ValueError("stringValue must be a string")
        return inner
    if kind == "boolValue":
        if not isinstance(inner, bool):
            raise ValueError("boolValue must be true or false")
        return inner
    if kind == "intValue":
        if isinstance(inner, bool) or not isinstance(inner, (int, str)):
            raise ValueError("intValue must be an integer")
        return int(inner)
    if kind == "doubleValue":
        if isinstance(inner, str) and inner in ("NaN", "Infinity", "-Infinity"):
            return float(inner.replace("Infinity", "inf"))
        if isinstance(inner, bool) or not isinstance(inner, (int, float)):
            raise ValueError("doubleValue must be a number")
        return float(inner)
    if kind == "arrayValue":
        return [any_value(v) for v in (inner or {}).get("values") or []]
    if kind == "kvlistValue":
        return {kv["key"]: any_value(kv.get("value") or {}) for kv in (inner or {}).get("values") or []}
    if kind == "bytesValue":
        return inner if isinstance(inner, str) else base64.b64encode(bytes(inner)).decode()
    raise ValueError(f"unknown AnyValue kind {kind!r}")


_CAMEL = {"string_value": "stringValue", "bool_value": "boolValue", "int_value": "intValue",
          "double_value": "doubleValue", "array_value": "arrayValue", "kvlist_value": "kvlistValue",
          "bytes_value": "bytesValue"}


def _get(obj: Mapping[str, Any], camel: str, snake: str) -> Any:
    return obj[camel] if camel in obj else obj.get(snake)


def _attributes(items: Any) -> dict[str, Any]:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise ValueError("attributes must be a list of {key, value} objects")
    out: dict[str, Any] = {}
    for kv in items:
        if not isinstance(kv, Mapping) or not isinstance(kv.get("key"), str):
            raise ValueError("attributes must be a list of {key, value} objects")
        out[kv["key"]] = any_value(kv.get("value") or {})
    return flatten(out)


def span_from_json(obj: Any) -> Span | Rejected:
    """One OTLP/JSON span, or why it is not one."""
    if not isinstance(obj, Mapping):
        return Rejected(f"a span must be an object, got {type(obj).__name__}", obj)
    trace = hex_id(_get(obj, "traceId", "trace_id"), 16)
    span = hex_id(_get(obj, "spanId", "span_id"), 8)
    if trace is None:
        return Rejected("traceId is not a 16-byte id (32 hex digits)", obj, span_id=span)
    if span is None:
        return Rejected("spanId is not an 8-byte id (16 hex digits)", obj, trace_id=trace)
    parent_raw = _get(obj, "parentSpanId", "parent_span_id")
    parent = hex_id(parent_raw, 8) if parent_raw else None
    if parent_raw and parent is None and str(parent_raw).strip("0"):
        return Rejected("parentSpanId is not an 8-byte id (16 hex digits)", obj, trace, span)
    name = obj.get("name", "")
    if not isinstance(name, str):
        return Rejected("name must be a string", obj, trace, span)
    try:
        start = _nanos(_get(obj, "startTimeUnixNano", "start_time_unix_nano"), "startTimeUnixNano")
        end = _nanos(_get(obj, "endTimeUnixNano", "end_time_unix_nano"), "endTimeUnixNano")
        attrs = _attributes(obj.get("attributes"))
    except (ValueError, TypeError, KeyError, RecursionError, OverflowError) as exc:
        return Rejected(str(exc), obj, trace, span)
    return Span(trace, span, parent, name, start, end, attrs)


def _list(obj: Mapping[str, Any], camel: str, snake: str, where: str) -> list[Any]:
    value = _get(obj, camel, snake)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInputError(f"{where}.{camel} must be a list", field=camel)
    return value


def json_spans(request: Any, *, where: str = "request") -> Iterator[Span | Rejected]:
    """Every span of an OTLP/JSON ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``)."""
    if not isinstance(request, Mapping) or not any(k in request for k in ("resourceSpans", "resource_spans")):
        raise InvalidInputError("not an OTLP trace export: no resourceSpans", field="resourceSpans",
                                fix='{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}')
    for r in _list(request, "resourceSpans", "resource_spans", where):
        if not isinstance(r, Mapping):
            raise InvalidInputError(f"{where}: a resourceSpans item must be an object", field="resourceSpans")
        scopes = _list(r, "scopeSpans", "scope_spans", "resourceSpans") or r.get("instrumentationLibrarySpans") or []
        for s in scopes:
            if not isinstance(s, Mapping):
                raise InvalidInputError(f"{where}: a scopeSpans item must be an object", field="scopeSpans")
            for span in _list(s, "spans", "spans", "scopeSpans"):
                yield span_from_json(span)


def protobuf_spans(body: bytes) -> Iterator[Span | Rejected]:
    """Every span of an OTLP/protobuf ``ExportTraceServiceRequest``."""
    try:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise InvalidInputError("OTLP/protobuf needs opentelemetry-proto",
                                fix="pip install 'ragmeter[otel]' (or send OTLP/JSON)") from None
    try:
        request = ExportTraceServiceRequest.FromString(body)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise InvalidInputError(f"not an OTLP/protobuf ExportTraceServiceRequest ({exc})") from None
    for r in request.resource_spans:
        for s in r.scope_spans:
            for span in s.spans:
                yield _from_proto(span)


def _from_proto(span: Any) -> Span | Rejected:
    trace, sid = hex_id(span.trace_id, 16), hex_id(span.span_id, 8)
    if trace is None or sid is None:
        what = "traceId is not a 16-byte id" if trace is None else "spanId is not an 8-byte id"
        return Rejected(what, {"name": span.name, "traceId": span.trace_id.hex(), "spanId": span.span_id.hex()},
                        trace, sid)
    parent = hex_id(span.parent_span_id, 8) if span.parent_span_id else None
    try:
        attrs = flatten({kv.key: _proto_value(kv.value) for kv in span.attributes})
    except (ValueError, RecursionError) as exc:
        return Rejected(str(exc), {"name": span.name, "traceId": trace, "spanId": sid}, trace, sid)
    return Span(trace, sid, parent, span.name, span.start_time_unix_nano, span.end_time_unix_nano, attrs)


def _proto_value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_proto_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _proto_value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(v.bytes_value).decode()
    return getattr(v, kind)
