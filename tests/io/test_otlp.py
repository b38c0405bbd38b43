"""OTLP spans read from protobuf and JSON: the SDK's own encoder is the reference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.otlp import Rejected, Span, any_value, flatten, hex_id, json_spans, protobuf_spans
from tests.otel_traces import otlp_json, protobuf_request, rag_trace, recorded


def _made(n: int = 2):
    tracer, exporter = recorded()
    ids = [rag_trace(tracer, f"q{i}?", [[("a", "text a", 0.9), ("b", "text b", 0.4)]], f"answer {i}") for i in range(n)]
    return ids, exporter.get_finished_spans()


def test_protobuf_and_json_read_the_same_spans_as_the_sdk_made():
    ids, made = _made()
    from_proto = list(protobuf_spans(protobuf_request(made)))
    from_json = list(json_spans(otlp_json(made)))
    assert from_proto == from_json
    assert all(isinstance(s, Span) for s in from_proto)
    by_id = {format(s.context.span_id, "016x"): s for s in made}
    for s in from_proto:
        sdk = by_id[s.span_id]
        assert s.trace_id == format(sdk.context.trace_id, "032x") and s.trace_id in ids
        assert s.parent_id == (format(sdk.parent.span_id, "016x") if sdk.parent else None)
        assert (s.name, s.start_ns, s.end_ns) == (sdk.name, sdk.start_time, sdk.end_time)
        assert dict(s.attributes) == dict(sdk.attributes)  # every type (str, float) back as the SDK set it


def test_a_span_without_valid_ids_is_rejected_with_the_reason_and_the_rest_kept():
    _, made = _made(1)
    request = otlp_json(made)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[0]["traceId"] = "not-an-id"
    spans[1]["startTimeUnixNano"] = "yesterday"
    out = list(json_spans(request))
    rejected = [r for r in out if isinstance(r, Rejected)]
    assert [r.reason for r in rejected] == ["traceId is not a 16-byte id (32 hex digits)",
                                            "startTimeUnixNano must be nanoseconds since the epoch, got 'yesterday'"]
    assert rejected[1].trace_id is not None and rejected[1].span_id is not None
    assert sum(isinstance(s, Span) for s in out) == len(spans) - 2


@pytest.mark.parametrize("body", [{"spans": []}, [], "x", {"resourceSpans": "x"}])
def test_a_body_that_is_no_export_request_is_an_error(body):
    with pytest.raises(InvalidInputError):
        list(json_spans(body))


def test_protobuf_garbage_is_an_error():
    with pytest.raises(InvalidInputError, match="not an OTLP/protobuf"):
        list(protobuf_spans(b"\xff\xff\xff\x0f garbage"))


def test_any_value_kinds_as_the_spec_writes_them():
    assert any_value({"intValue": "12345678901234567890"}) == 12345678901234567890  # 64-bit ints as strings
    assert any_value({"doubleValue": 0.5}) == 0.5
    assert any_value({"arrayValue": {"values": [{"stringValue": "a"}, {"boolValue": True}]}}) == ["a", True]
    assert any_value({"kvlistValue": {"values": [{"key": "k", "value": {"intValue": 1}}]}}) == {"k": 1}
    assert any_value({}) is None
    with pytest.raises(ValueError):
        any_value({"stringValue": 3})


def test_nested_attributes_flatten_to_the_dotted_keys():
    nested = {"retrieval": {"documents": [{"document": {"id": "a", "score": 0.5}}, {"document": {"id": "b"}}]}}
    assert flatten(nested) == {"retrieval.documents.0.document.id": "a", "retrieval.documents.0.document.score": 0.5,
                               "retrieval.documents.1.document.id": "b"}


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=16, max_size=16))
def test_hex_and_base64_ids_agree(raw):
    import base64

    expected = raw.hex() if any(raw) else None
    assert hex_id(raw.hex(), 16) == hex_id(raw.hex().upper(), 16) == expected
    assert hex_id(base64.b64encode(raw).decode(), 16) == expected
    assert hex_id(raw.hex(), 8) is None  # a trace id is no span id


@settings(max_examples=40, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text() | st.floats(),
                    lambda c: st.lists(c) | st.dictionaries(st.text(), c), max_leaves=20))
def test_hostile_spans_never_raise(value):
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [value, {"traceId": value, "spanId": value,
                                                                   "attributes": value}]}]}]}
    for item in json_spans(request):
        assert isinstance(item, (Span, Rejected))


def test_attributes_of_every_shape_decode_to_the_same_dotted_keys():
    from ragmeter.io.otlp import attributes

    flat = {"input.value": "q", "n": 3, "tags": ["a", "b"], "retrieval.documents.0.document.id": "d"}
    otlp = [{"key": "input.value", "value": {"stringValue": "q"}}, {"key": "n", "value": {"intValue": "3"}},
            {"key": "tags", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"stringValue": "b"}]}}},
            {"key": "retrieval.documents.0.document.id", "value": {"stringValue": "d"}}]
    nested = {"input": {"value": "q"}, "n": 3, "tags": ["a", "b"],
              "retrieval": {"documents": [{"document": {"id": "d"}}]}}
    assert attributes(flat) == attributes(otlp) == attributes(nested) == flat
    assert attributes(None) == {}
    with pytest.raises(ValueError, match=r"list of \{key, value\} objects"):
        attributes([{"key": "a", "value": {"intValue": "3"}}, {"nokey": 1}])
    with pytest.raises(ValueError, match=r"list of \{key, value\} objects"):
        attributes("nonsense")
    with pytest.raises(ValueError, match="attribute 'a': stringValue must be a string"):
        attributes([{"key": "a", "value": {"stringValue": 1}}])
    for bad in ({"arrayValue": [1]}, {"kvlistValue": {"values": [1]}}, {"bytesValue": 3}):
        with pytest.raises(ValueError):
            any_value(bad)


def test_span_times_in_every_unit_and_shape():
    """``*UnixNano`` counts nanoseconds; ``start_time`` is an ISO 8601 time or a number whose size
    says its unit; 1.7e9 seconds is 2023-11-14T22:13:20Z."""
    from ragmeter.io.otlp import span_time, unix_nanos

    ns = 1_700_000_000 * 10 ** 9
    assert unix_nanos("1700000000000000000", "startTimeUnixNano") == unix_nanos(ns, "t") == ns
    assert unix_nanos(5, "t") == 5 and unix_nanos(None, "t") == 0  # a small count is still nanoseconds
    for value in ("2023-11-14T22:13:20Z", "2023-11-14T22:13:20", "2023-11-14T23:13:20+01:00", 1.7e9, 1_700_000_000,
                  1.7e12, 1.7e15, 1.7e18, "1700000000000000000", "1700000000"):
        assert span_time(value, "start_time") == ns, value
    assert span_time(None, "start_time") == 0
    for bad in ("yesterday", True, -1, float("nan"), "1960-01-01T00:00:00Z", 2 ** 64, "9" * 30):
        with pytest.raises(ValueError, match="start_time"):
            span_time(bad, "start_time")
    with pytest.raises(ValueError, match="64 bits"):
        unix_nanos("9" * 20, "startTimeUnixNano")


def test_a_span_as_each_exporter_writes_it_reads_the_same():
    """OTLP/JSON's span, Phoenix's (context ids, span_kind, ISO times, nested attributes), its
    dataframe's record (dotted columns, milliseconds) and a log's span (ids as given)."""
    from ragmeter.io.otlp import span_from_json

    trace, span, parent = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174", "eee19b7ec3c1b173"
    otlp = {"traceId": trace.upper(), "spanId": span, "parentSpanId": parent, "name": "retrieve",
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": 1_700_000_001_000_000_000,
            "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}},
                           {"key": "input.value", "value": {"stringValue": "q"}}]}
    phoenix = {"name": "retrieve", "context": {"trace_id": trace, "span_id": span}, "parent_id": parent,
               "span_kind": "RETRIEVER", "start_time": "2023-11-14T22:13:20+00:00",
               "end_time": "2023-11-14T22:13:21+00:00", "attributes": {"input": {"value": "q"}}}
    frame = {"name": "retrieve", "context.trace_id": trace, "context.span_id": span, "parent_id": parent,
             "span_kind": "RETRIEVER", "start_time": 1_700_000_000_000, "end_time": 1_700_000_001_000,
             "attributes.input.value": "q"}
    expected = Span(trace, span, parent, "retrieve", 1_700_000_000 * 10 ** 9, 1_700_000_001 * 10 ** 9,
                    {"openinference.span.kind": "RETRIEVER", "input.value": "q"})
    assert span_from_json(otlp) == span_from_json(phoenix) == span_from_json(frame) == expected
    log = span_from_json({"span_id": "s1", "context": {"trace_id": "t1"}, "attributes": {"input.value": "q"}},
                         hex_ids=False)
    assert isinstance(log, Span) and (log.trace_id, log.span_id, log.parent_id, log.start_ns) == ("t1", "s1", None, 0)
    assert span_from_json({"span_id": "s1"}).reason == "traceId is not a 16-byte id (32 hex digits)"
    bad = span_from_json({**phoenix, "start_time": "yesterday"})
    assert isinstance(bad, Rejected) and bad.field == "start_time" and (bad.trace_id, bad.span_id) == (trace, span)


def test_a_time_past_64_bits_is_rejected_not_a_crash_later():
    """A 400-digit startTimeUnixNano was kept, and its trace's time (ns / 1e9) raised OverflowError in the watcher."""
    span = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "startTimeUnixNano": "9" * 400}
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    (item,) = json_spans(request)
    assert isinstance(item, Rejected) and "64 bits" in item.reason
