"""``ragmeter watch --otlp [HOST:]PORT``: an OTLP/HTTP endpoint for traces, as the OTLP spec has it.

``POST /v1/traces`` takes an ``ExportTraceServiceRequest`` as ``application/x-protobuf`` or
``application/json`` (``Content-Encoding: gzip`` or ``deflate`` too), stores its spans in the
:class:`~ragmeter.live.spool.Spool` (on disk when the call returns) and only then answers, in the
request's encoding (OTLP/HTTP 1.x, "OTLP/HTTP Response"):

- ``200`` with an ``ExportTraceServiceResponse``; spans it could not read are quarantined with
  their reason and counted in its ``partialSuccess`` (``rejectedSpans``, ``errorMessage``);
- ``400`` (not retryable) for a body that is not an export request, with a ``google.rpc.Status``;
- ``503`` with ``Retry-After`` (retryable: the exporter waits that long, then sends again) when
  the scorer is behind: more than ``max_backlog`` traces wait in the spool;
- ``413`` for a body over ``max_body`` bytes (after decompression too), ``415`` for another
  content type, ``404`` / ``405`` elsewhere.

``POST /v1/feedback`` takes user feedback joined later to a request by its id (the trace id):
``{"request_id": "...", "value": 1}`` (or a list of them), stored the same way.

It listens on loopback unless told otherwise. Nothing here scores: the watcher reads the spool.
"""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.otlp import Rejected, Span, json_spans, protobuf_spans
from ragmeter.live.spool import Spool

PROTOBUF, JSON = "application/x-protobuf", "application/json"
#: google.rpc.Code values the OTLP spec names for these answers
INVALID_ARGUMENT, UNAVAILABLE, RESOURCE_EXHAUSTED = 3, 14, 8
MAX_BODY = 32 << 20
RETRY_AFTER_S = 5


def parse_listen(text: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """``4318`` -> ("127.0.0.1", 4318); ``0.0.0.0:4318``; ``[::1]:4318``.

    >>> parse_listen("4318"), parse_listen("0.0.0.0:4318"), parse_listen("[::1]:4318")
    (('127.0.0.1', 4318), ('0.0.0.0', 4318), ('::1', 4318))
    """
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = default_host, text
    host = host.strip("[]") or default_host
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--otlp takes [HOST:]PORT (a port 0 to 65535), got {text!r}")
    return host, int(port)


def status_body(code: int, message: str, content_type: str) -> bytes:
    """A ``google.rpc.Status`` (``code``, ``message``) in protobuf or JSON.

    >>> status_body(3, "bad", PROTOBUF)
    b'\\x08\\x03\\x12\\x03bad'
    """
    if content_type == JSON:
        return json.dumps({"code": code, "message": message}).encode()
    text = message.encode("utf-8")
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def export_response(rejected: int, message: str, content_type: str) -> bytes:
    """An ``ExportTraceServiceResponse``, with ``partialSuccess`` when spans were rejected."""
    if content_type == JSON:
        return json.dumps({"partialSuccess": {"rejectedSpans": str(rejected), "errorMessage": message}}
                          if rejected else {}).encode()
    if not rejected:
        return b""
    text = message.encode("utf-8")
    inner = b"\x08" + _varint(rejected) + b"\x12" + _varint(len(text)) + text
    return b"\x0a" + _varint(len(inner)) + inner


class Receiver:
    """The endpoint (see the module docstring), serving from a thread until :meth:`close`."""

    def __init__(self, spool: Spool, host: str = "127.0.0.1", port: int = 4318, *, max_backlog: int = 20_000,
                 max_body: int = MAX_BODY, retry_after: int = RETRY_AFTER_S) -> None:
        self.spool, self.max_backlog, self.max_body, self.retry_after = spool, max_backlog, max_body, retry_after
        self.counts = {"requests": 0, "spans": 0, "rejected_spans": 0, "shed": 0, "bad_requests": 0, "feedback": 0}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), _handler(self))
        self._server.daemon_threads = True
        self.host, self.port = str(self._server.server_address[0]), int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, name="ragmeter-otlp", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in str(self.host) else self.host
        return f"http://{host}:{self.port}/v1/traces"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def count(self, **add: int) -> None:
        with self._lock:
            for k, v in add.items():
                self.counts[k] += v

    def take_traces(self, body: bytes, content_type: str) -> tuple[int, str, bytes]:
        """(status, content type, body) for an export request's bytes."""
        if self.spool.open_traces() > self.max_backlog:
            self.count(shed=1)
            return 503, content_type, status_body(UNAVAILABLE, f"ragmeter is scoring behind ({self.max_backlog} "
                                                                 "traces wait): retry after the delay", content_type)
        try:
            items = list(json_spans(_json(body)) if content_type == JSON else protobuf_spans(body))
        except InvalidInputError as exc:
            self.count(bad_requests=1)
            return 400, content_type, status_body(INVALID_ARGUMENT, exc.problem, content_type)
        spans = [s for s in items if isinstance(s, Span)]
        rejected = [r for r in items if isinstance(r, Rejected)]
        self.spool.add(spans, rejected)  # on disk before the answer: what is acknowledged survives a kill
        self.count(requests=1, spans=len(spans), rejected_spans=len(rejected))
        message = f"{len(rejected)} span(s) quarantined: {rejected[0].reason}" if rejected else ""
        return 200, content_type, export_response(len(rejected), message, content_type)

    def take_feedback(self, body: bytes) -> tuple[int, str, bytes]:
        try:
            data = _json(body)
            records = data if isinstance(data, list) else [data]
            for i, r in enumerate(records):
                if not isinstance(r, dict) or not isinstance(r.get("request_id"), str) or "value" not in r:
                    raise InvalidInputError(f"feedback {i + 1} needs request_id (a string) and value",
                                            fix='{"request_id": "<trace id>", "value": 1}')
        except InvalidInputError as exc:
            self.count(bad_requests=1)
            return 400, JSON, status_body(INVALID_ARGUMENT, exc.problem + (f"; {exc.fix}" if exc.fix else ""), JSON)
        self.spool.add_feedback(records)
        self.count(feedback=len(records))
        return 200, JSON, b"{}"


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise InvalidInputError(f"not JSON ({exc})") from None


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "ragmeter-otlp"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass  # no request log on stderr: the watcher says what it read

        def _answer(self, status: int, content_type: str, body: bytes, extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - the base class's name
            self._answer(405 if self.path.split("?")[0] in ("/v1/traces", "/v1/feedback") else 404, "text/plain",
                         b"POST an OTLP ExportTraceServiceRequest to /v1/traces\n", {"Allow": "POST"})

        def do_POST(self) -> None:  # noqa: N802
            path = self.path.split("?")[0]
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            reply_type = JSON if ctype == JSON else PROTOBUF
            try:
                length = int(self.headers.get("Content-Length") or "")
            except ValueError:
                self._answer(411, reply_type, status_body(INVALID_ARGUMENT, "Content-Length required", reply_type),
                             {"Connection": "close"})
                return
            if length > receiver.max_body:
                self._answer(413, reply_type, status_body(RESOURCE_EXHAUSTED, f"body over {receiver.max_body} bytes",
                                                          reply_type), {"Connection": "close"})
                return
            body = self.rfile.read(length)
            if path not in ("/v1/traces", "/v1/feedback"):
                self._answer(404, "text/plain", b"not found: POST to /v1/traces\n")
                return
            encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
            try:
                body = _decompress(body, encoding, receiver.max_body)
            except ValueError as exc:
                code = 413 if "over" in str(exc) else 400
                self._answer(code, reply_type, status_body(INVALID_ARGUMENT, str(exc), reply_type))
                return
            if path == "/v1/feedback":
                self._answer(*receiver.take_feedback(body))
                return
            if ctype not in (PROTOBUF, JSON):
                self._answer(415, JSON, status_body(INVALID_ARGUMENT, f"Content-Type {ctype or 'missing'}: send "
                                                                      f"{PROTOBUF} or {JSON}", JSON))
                return
            status, out_type, out = receiver.take_traces(body, reply_type)
            extra = {"Retry-After": str(receiver.retry_after)} if status == 503 else None
            self._answer(status, out_type, out, extra)

    return Handler


def _decompress(body: bytes, encoding: str, limit: int) -> bytes:
    if encoding in ("identity", ""):
        return body
    if encoding not in ("gzip", "deflate"):
        raise ValueError(f"Content-Encoding {encoding} is not supported (gzip, deflate or none)")
    d = zlib.decompressobj(wbits=31 if encoding == "gzip" else 15)
    try:
        out = d.decompress(body, limit + 1)
    except (zlib.error, gzip.BadGzipFile) as exc:
        raise ValueError(f"the {encoding} body does not decompress ({exc})") from None
    if len(out) > limit:
        raise ValueError(f"body over {limit} bytes once decompressed")
    return out
