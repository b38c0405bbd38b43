"""The OTLP/HTTP receiver, driven by the OpenTelemetry SDK's own OTLP/HTTP exporter, and answering
as the OTLP spec says (responses decoded with the spec's own messages)."""

from __future__ import annotations

import gzip
import json
import threading
import time

import httpx
import pytest

from ragmeter.live.receiver import PROTOBUF, Receiver, parse_listen
from ragmeter.live.spool import Spool
from tests.installed import need
from tests.otel_traces import otlp_json, protobuf_request, rag_trace, recorded

A = [("a", "Refunds take 5 days.", 0.9)]


@pytest.fixture
def receiver(tmp_path):
    r = Receiver(Spool(tmp_path / "spool.sqlite", settle=0.0), "127.0.0.1", 0, retry_after=1)
    yield r
    r.close()


def _exporter(url: str):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url, timeout=20)))
    return provider


def test_the_sdk_exporter_sends_and_every_span_is_stored(receiver):
    provider = _exporter(receiver.url)
    ids = {rag_trace(provider.get_tracer("t"), f"q{i}?", [A], "a") for i in range(3)}
    provider.shutdown()
    ready = receiver.spool.ready(10)
    assert {t.trace_id for t in ready} == ids
    assert all(len(t.spans) == 3 for t in ready)  # root, retriever, LLM
    assert receiver.counts["spans"] == 9 and receiver.counts["rejected_spans"] == 0


def test_json_with_a_bad_span_is_a_partial_success(receiver):
    tracer, exporter = recorded()
    rag_trace(tracer, "q?", [A], "a")
    body = otlp_json(exporter.get_finished_spans())
    body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = "zz"
    reply = httpx.post(receiver.url, json=body)
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    partial = reply.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1" and "spanId is not an 8-byte id" in partial["errorMessage"]
    (kept,) = receiver.spool.rejected(10)
    assert "spanId" in kept.reason


def test_protobuf_partial_success_and_a_bad_request_read_by_the_spec_messages(receiver):
    need("google.rpc.status_pb2")
    from google.rpc.status_pb2 import Status
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )

    tracer, exporter = recorded()
    rag_trace(tracer, "q?", [A], "a")
    request = ExportTraceServiceRequest.FromString(protobuf_request(exporter.get_finished_spans()))
    request.resource_spans[0].scope_spans[0].spans[0].trace_id = b"\x00" * 16
    reply = httpx.post(receiver.url, content=request.SerializeToString(), headers={"Content-Type": PROTOBUF})
    assert reply.status_code == 200
    assert ExportTraceServiceResponse.FromString(reply.content).partial_success.rejected_spans == 1
    bad = httpx.post(receiver.url, content=b"\xff\xff\xff garbage", headers={"Content-Type": PROTOBUF})
    assert bad.status_code == 400
    status = Status.FromString(bad.content)
    assert status.code == 3 and "not an OTLP/protobuf" in status.message


@pytest.mark.slow
def test_gzip_unsupported_types_and_oversized_bodies(tmp_path):
    r = Receiver(Spool(tmp_path / "s.sqlite"), "127.0.0.1", 0, max_body=4096)
    try:
        tracer, exporter = recorded()
        rag_trace(tracer, "q?", [A], "a")
        body = protobuf_request(exporter.get_finished_spans())
        ok = httpx.post(r.url, content=gzip.compress(body), headers={"Content-Type": PROTOBUF,
                                                                     "Content-Encoding": "gzip"})
        assert ok.status_code == 200 and r.counts["spans"] == 3
        assert httpx.post(r.url, content=b"x", headers={"Content-Type": "text/plain"}).status_code == 415
        assert httpx.post(r.url, content=b"x" * 5000, headers={"Content-Type": PROTOBUF}).status_code == 413
        bomb = gzip.compress(b"\x00" * 100_000)  # small on the wire, over the bound once inflated
        assert httpx.post(r.url, content=bomb, headers={"Content-Type": PROTOBUF,
                                                        "Content-Encoding": "gzip"}).status_code == 413
        assert httpx.get(r.url).status_code == 405
        assert httpx.post(r.url.replace("/v1/traces", "/v1/logs"), content=b"").status_code == 404
    finally:
        r.close()


@pytest.mark.slow
def test_load_is_shed_with_503_and_retry_after_and_the_exporter_comes_back(tmp_path):
    """Past ``max_backlog`` waiting traces: 503 with Retry-After (OTLP/HTTP "Failures"); the SDK's
    exporter waits that long and sends again, and its spans are taken once the scorer caught up."""
    spool = Spool(tmp_path / "s.sqlite", settle=0.0)
    r = Receiver(spool, "127.0.0.1", 0, max_backlog=1, retry_after=1)
    try:
        tracer, exporter = recorded()
        rag_trace(tracer, "q1?", [A], "a")
        rag_trace(tracer, "q2?", [A], "a")
        httpx.post(r.url, content=protobuf_request(exporter.get_finished_spans()), headers={"Content-Type": PROTOBUF})
        shed = httpx.post(r.url, content=b"", headers={"Content-Type": PROTOBUF})
        assert shed.status_code == 503 and shed.headers["Retry-After"] == "1"

        def catch_up() -> None:  # the scorer drains the backlog a moment later
            time.sleep(0.5)
            spool.forget(spool.ready(10))

        threading.Thread(target=catch_up).start()
        provider = _exporter(r.url)
        start = time.monotonic()
        late = rag_trace(provider.get_tracer("t"), "q3?", [A], "a")
        provider.shutdown()
        assert r.counts["shed"] >= 2  # the exporter was told to wait at least once
        assert time.monotonic() - start >= 1.0  # and it waited the Retry-After
        assert [t.trace_id for t in spool.ready(10)] == [late]
    finally:
        r.close()


def test_feedback_is_stored_and_a_bad_one_refused(receiver):
    url = receiver.url.replace("/v1/traces", "/v1/feedback")
    assert httpx.post(url, json=[{"request_id": "abc", "value": -1}]).status_code == 200
    bad = httpx.post(url, json={"value": 1})
    assert bad.status_code == 400 and "request_id" in bad.json()["message"]
    (fb,) = receiver.spool.feedback(10)
    assert fb.body == {"request_id": "abc", "value": -1}


def test_listen_addresses():
    assert parse_listen("4318") == ("127.0.0.1", 4318)  # loopback by default
    with pytest.raises(ValueError, match=r"\[HOST:\]PORT"):
        parse_listen("host:port")
    assert json.loads(json.dumps(parse_listen("[::1]:1"))) == ["::1", 1]
