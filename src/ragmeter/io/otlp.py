"""OpenTelemetry spans, as OTLP carries them and as exporters write them to JSON, read into plain
:class:`Span` values: the one reader of span records, their ids, times and attributes, for ``eval``
(span files, trace exports), ``watch`` (a log of spans, the OTLP receiver) and the action grader.

OTLP's message, ``ExportTraceServiceRequest`` (``resourceSpans`` -> ``scopeSpans`` -> ``spans``), in
its two encodings: OTLP/JSON, as an exporter posts it and as the Collector's file exporter writes it
(one request per line), and OTLP/protobuf, decoded by ``opentelemetry-proto`` (``pip install
'ragmeter[otel]'``). The JSON mapping follows the OTLP specification: trace and span ids in hex
(base64, protobuf's own JSON mapping, is read too), 64-bit integers as strings or numbers, keys in
lowerCamelCase (snake_case accepted), attributes as ``[{"key", "value": {"stringValue" | "intValue" |
"doubleValue" | "boolValue" | "arrayValue" | "kvlistValue" | "bytesValue": ...}}]``.

:func:`span_from_json` reads a span as other exporters write it too: Phoenix's (``context.trace_id``
/ ``context.span_id``, ``parent_id``, ``span_kind``, an ISO 8601 ``start_time``, attributes nested),
its spans dataframe saved as records (``context.span_id``, ``attributes.input.value``), and a JSON
lines log of spans (``span_id``, attributes flattened or as OTLP's list). Attributes of every shape
are decoded by :func:`attributes`, times by :func:`unix_nanos` (OTLP's ``*UnixNano``) and
:func:`span_time` (``start_time`` / ``end_time``).

A span that is not one (no valid trace or span id, a time that is not one, attributes that
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
from datetime import datetime, timedelta, timezone
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


#: The OpenInference attribute that says what a span does (``RETRIEVER``, ``LLM``, ``TOOL``, ...);
#: Phoenix's export writes it as ``span_kind``.
KIND = "openinference.span.kind"


@dataclass(frozen=True)
class Rejected:
    """A span that cannot be read, why, what was sent (for the quarantine file), and the field
    at fault."""

    reason: str
    span: Any
    trace_id: str | None = None
    span_id: str | None = None
    field: str | None = None


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


_MAX_NS = 2 ** 64  # OTLP's fixed64
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def unix_nanos(value: Any, what: str) -> int:
    """OTLP's ``startTimeUnixNano`` / ``endTimeUnixNano``: nanoseconds since the epoch, as a number
    or a decimal string (a 64-bit integer in OTLP/JSON); 0 when not given.

    >>> unix_nanos("1700000000000000000", "startTimeUnixNano"), unix_nanos(1_700_000_000_000_000_000, "t")
    (1700000000000000000, 1700000000000000000)
    """
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        raise ValueError(f"{what} must be nanoseconds since the epoch, got a boolean")
    if isinstance(value, str):
        text = value.strip()
        if not (text.isascii() and text.isdigit()):
            raise ValueError(f"{what} must be nanoseconds since the epoch, got {value[:40]!r}")
        value = int(text) if len(text) <= 20 else _MAX_NS
    elif isinstance(value, float) and math.isfinite(value) and value >= 0:
        value = int(value)
    elif not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must not be negative" if isinstance(value, (int, float)) and value < 0
                         else f"{what} must be nanoseconds since the epoch, got {type(value).__name__}")
    if value >= _MAX_NS:
        raise ValueError(f"{what} must be nanoseconds since the epoch (at most 64 bits)")
    return value


def span_time(value: Any, what: str) -> int:
    """``start_time`` / ``end_time`` as Phoenix and logs of spans write them, in nanoseconds since the
    epoch: an ISO 8601 time (UTC when it names no zone), or a number of seconds, milliseconds,
    microseconds or nanoseconds, told apart by its size (each below 10^11, 10^14, 10^17: until the
    year 5138); 0 when not given.

    >>> [span_time(v, "start_time") for v in ("2023-11-14T22:13:20Z", 1.7e9, 1.7e12, 1.7e15, "1700000000000000000")]
    [1700000000000000000, 1700000000000000000, 1700000000000000000, 1700000000000000000, 1700000000000000000]
    """
    if value is None or value == "":
        return 0
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and text.isdigit():
            return span_time(int(text), what) if len(text) <= 20 else unix_nanos(text, what)
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{what} must be an ISO 8601 time or a number since the epoch, got {value[:40]!r}") \
                from None
        when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
        nanos = (when - _EPOCH) // timedelta(microseconds=1) * 1000
        if nanos < 0:
            raise ValueError(f"{what} must not be before 1970, got {value[:40]!r}")
        return nanos
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be an ISO 8601 time or a number since the epoch, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number")
    if value < 0:
        raise ValueError(f"{what} must not be negative")
    scale = 10 ** 9 if value < 1e11 else 10 ** 6 if value < 1e14 else 1000 if value < 1e17 else 1
    return unix_nanos(value * scale if isinstance(value, int) else float(value) * scale, what)


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
        return [any_value(v) for v in _values(inner, "arrayValue")]
    if kind == "kvlistValue":
        out = {}
        for kv in _values(inner, "kvlistValue"):
            if not isinstance(kv, Mapping) or not isinstance(kv.get("key"), str):
                raise ValueError("a kvlistValue must hold {key, value} objects")
            out[kv["key"]] = any_value(kv.get("value") or {})
        return out
    if kind == "bytesValue":
        if not isinstance(inner, str):
            raise ValueError("bytesValue must be base64 text")
        return inner
    raise ValueError(f"unknown AnyValue kind {kind!r}")


def _values(inner: Any, kind: str) -> list[Any]:
    """An ``arrayValue`` / ``kvlistValue``'s ``values`` (absent: none)."""
    values = inner.get("values") if isinstance(inner, Mapping) else inner
    if values is not None and (not isinstance(values, list) or not isinstance(inner, Mapping)):
        raise ValueError(f"{kind} must be {{\"values\": [...]}}")
    return values or []


_CAMEL = {"string_value": "stringValue", "bool_value": "boolValue", "int_value": "intValue",
          "double_value": "doubleValue", "array_value": "arrayValue", "kvlist_value": "kvlistValue",
          "bytes_value": "bytesValue"}


def _get(obj: Mapping[str, Any], camel: str, snake: str) -> Any:
    return obj[camel] if camel in obj else obj.get(snake)


def attributes(value: Any) -> dict[str, Any]:
    """A span's attributes, whatever shape they come in, as one flat dict of dotted keys: OTLP/JSON's
    list of ``{"key", "value": AnyValue}`` (each value decoded by :func:`any_value`), an object with
    dotted keys, or an object nested as Phoenix returns it (both through :func:`flatten`).
    ``ValueError`` names what is not an attribute.

    >>> attributes([{"key": "n", "value": {"intValue": "3"}},
    ...             {"key": "tags", "value": {"arrayValue": {"values": [{"stringValue": "a"}]}}}])
    {'n': 3, 'tags': ['a']}
    >>> attributes({"input": {"value": "q"}, "output.value": "a"})
    {'input.value': 'q', 'output.value': 'a'}
    """
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return flatten(value)
    if not isinstance(value, list):
        raise ValueError("attributes must be a list of {key, value} objects or an object")
    out: dict[str, Any] = {}
    for kv in value:
        if not isinstance(kv, Mapping) or not isinstance(kv.get("key"), str):
            raise ValueError("attributes must be a list of {key, value} objects or an object")
        try:
            out[kv["key"]] = any_value(kv.get("value") or {})
        except (ValueError, OverflowError) as exc:
            raise ValueError(f"attribute {kv['key'][:80]!r}: {exc}") from None
    return flatten(out)


_TRACE = ("traceId", "trace_id", "context.trace_id")
_SPAN = ("spanId", "span_id", "context.span_id")
_PARENT = ("parentSpanId", "parent_span_id", "parent_id")
_START = ("startTimeUnixNano", "start_time_unix_nano", "start_time")
_END = ("endTimeUnixNano", "end_time_unix_nano", "end_time")


def _lookup(obj: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str, Any]:
    """(the name found, its value) for the first of ``names`` the span gives (``context.x``:
    ``{"context": {"x": ...}}`` or a record's ``"context.x"``), else (the first name, None)."""
    ctx = obj.get("context")
    for name in names:
        value = obj.get(name)
        if value is None and name.startswith("context.") and isinstance(ctx, Mapping):
            value = ctx.get(name[len("context."):])
        if value is not None and value != "":
            return name, value
    return names[0], None


def _given_id(value: Any) -> str:
    """An id as the span gives it (a non-empty string or an integer), else ''."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        return ""
    return str(value)


def span_from_json(obj: Any, *, hex_ids: bool = True) -> Span | Rejected:
    """One span as JSON (OTLP's, Phoenix's, a log's: see the module docstring), or why it is not one.
    ``hex_ids``: trace and span ids must be OpenTelemetry's (16 and 8 bytes, hex or base64, read
    into lowercase hex); else they are kept as given, '' when absent (a log's spans need none)."""
    if not isinstance(obj, Mapping):
        return Rejected(f"a span must be an object, got {type(obj).__name__}", obj)
    (trace_key, trace_raw), (span_key, span_raw) = _lookup(obj, _TRACE), _lookup(obj, _SPAN)
    parent_key, parent_raw = _lookup(obj, _PARENT)
    if hex_ids:
        trace, span = hex_id(trace_raw, 16), hex_id(span_raw, 8)
        if trace is None:
            return Rejected(f"{trace_key} is not a 16-byte id (32 hex digits)", obj, span_id=span, field=trace_key)
        if span is None:
            return Rejected(f"{span_key} is not an 8-byte id (16 hex digits)", obj, trace_id=trace, field=span_key)
        parent = hex_id(parent_raw, 8) if parent_raw else None
        if parent_raw and parent is None and str(parent_raw).strip("0"):
            return Rejected(f"{parent_key} is not an 8-byte id (16 hex digits)", obj, trace, span, parent_key)
    else:
        trace, span, parent = _given_id(trace_raw), _given_id(span_raw), _given_id(parent_raw) or None
    name = obj.get("name")
    if name is not None and not isinstance(name, str):
        return Rejected("name must be a string", obj, trace, span, "name")
    times = []
    for key, raw in (_lookup(obj, _START), _lookup(obj, _END)):
        try:
            times.append(unix_nanos(raw, key) if key.endswith(("Nano", "nano")) else span_time(raw, key))
        except ValueError as exc:
            return Rejected(str(exc), obj, trace, span, key)
    try:
        attrs = attributes(obj.get("attributes"))
        for key, value in obj.items():  # a spans dataframe's columns: "attributes.input.value"
            if isinstance(key, str) and key.startswith("attributes."):
                flatten(value, key[len("attributes."):], attrs)
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        return Rejected(str(exc), obj, trace, span, "attributes")
    kind = obj.get("span_kind")
    if isinstance(kind, str) and KIND not in attrs:  # Phoenix's export
        attrs[KIND] = kind
    return Span(trace, span, parent, name or "", times[0], times[1], attrs)


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
