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
