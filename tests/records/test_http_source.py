"""The HTTP record source against a real server on 127.0.0.1: a reply over the size limit is
refused while it streams, at the limit (the bytes read and the memory held stay near the
limit, not the body's size); an entity or attribute ``.`` or ``..`` never walks up the
template's path (refused, never sent); a reason names the URL as sent."""

from __future__ import annotations

import threading
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ragmeter.records import Fact, HttpSource, RecordLookup, check_facts_sync, http_source

BODY_MB = 64
LIMIT = 1_000_000


class _Big(BaseHTTPRequestHandler):
    sent: list[int]
    paths: list[str]

    def log_message(self, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.paths.append(self.path)
        chunk = b"[" + b"1," * 32_000 + b"1]"
        if self.path.startswith("/big"):  # a JSON list, streamed without a length
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            total = 0
            try:
                self.wfile.write(b'{"data": [')
                while total < BODY_MB * 1_000_000:
                    self.wfile.write(chunk + b",")
                    total += len(chunk) + 1
                    self.sent[0] = total
                self.wfile.write(b"1]}")
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if self.path.startswith("/declared"):  # says how large it is up front
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(BODY_MB * 1_000_000))
            self.end_headers()
            try:
                for _ in range(BODY_MB * 1_000_000 // len(chunk)):
                    self.wfile.write(chunk)
                    self.sent[1] += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        data = b'{"status": "shipped"}'
        self.send_response(404 if self.path.startswith("/missing") else 200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server(monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    handler = type("Big", (_Big,), {"sent": [0, 0], "paths": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    httpd.shutdown()
    httpd.server_close()


def test_a_reply_over_the_limit_is_refused_while_it_streams(server, monkeypatch):
    url, handler = server
    monkeypatch.setattr(http_source, "MAX_BODY", LIMIT)
    tracemalloc.start()
    try:
        check = check_facts_sync([Fact("E1", "status", "shipped")],
                                 RecordLookup(HttpSource(url + "/big/{entity}", timeout_s=30), timeout_s=60))[0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert check.verdict == "cannot_verify" and f"over {LIMIT} bytes" in check.reason, check.reason
    assert peak < 8 * LIMIT, f"peak {peak} bytes held for a {BODY_MB} MB reply"
    assert handler.sent[0] < 16 * LIMIT, f"{handler.sent[0]} bytes sent of {BODY_MB} MB"  # socket buffers, no more


def test_a_declared_length_over_the_limit_is_refused_before_reading(server, monkeypatch):
    url, handler = server
    monkeypatch.setattr(http_source, "MAX_BODY", LIMIT)
    check = check_facts_sync([Fact("E1", "status", "shipped")],
                             RecordLookup(HttpSource(url + "/declared/{entity}", timeout_s=30), timeout_s=60))[0]
    assert check.verdict == "cannot_verify" and f"over {LIMIT} bytes" in check.reason, check.reason
    assert handler.sent[1] < 16 * LIMIT


@pytest.mark.parametrize("entity, attribute", [("..", "status"), (".", "status"), ("ORD-1", ".."), (" .. ", "x")])
def test_dot_segments_never_leave_the_template_path(server, entity, attribute):
    url, handler = server
    source = HttpSource(url + "/api/orders/{entity}/{attribute}", pointers="/status")
    check = check_facts_sync([Fact(entity, attribute, "shipped")], RecordLookup(source))[0]
    assert check.verdict == "cannot_verify" and "leaves the template's path; not sent" in check.reason, check.reason
    assert handler.paths == []  # nothing was sent


def test_dots_inside_a_value_and_in_a_query_are_just_text(server):
    url, handler = server
    ok = check_facts_sync([Fact("a..b", "status", "shipped"), Fact("..", "status", "shipped")],
                          RecordLookup(HttpSource(url + "/api/orders/{entity}.json", pointers="/status")))
    query = check_facts_sync([Fact("..", "status", "shipped")],
                             RecordLookup(HttpSource(url + "/api/orders?id={entity}", pointers="/status")))
    assert [c.verdict for c in ok + query] == ["pass", "pass", "pass"]
    # the two facts of the first check are looked up concurrently: their requests arrive in either order
    assert sorted(handler.paths[:2]) == ["/api/orders/...json", "/api/orders/a..b.json"]
    assert handler.paths[2:] == ["/api/orders?id=.."]


def test_a_reason_names_the_url_as_sent(server):
    url, _ = server
    source = HttpSource(url + "/missing/./{entity}", pointers="/status")  # httpx resolves the template's own "."
    check = check_facts_sync([Fact("E1", "status", "red")], RecordLookup(source))[0]
    assert check.verdict == "cannot_verify" and "/missing/E1 answered 404" in check.reason, check.reason
    assert "/./" not in check.reason


@pytest.mark.parametrize("template", ["http://{entity}.crm.internal/orders", "http://crm-{attribute}/o/{entity}",
                                      "https://user:{entity}@crm/o", "http://crm:{entity}/o"])
def test_a_template_whose_host_the_data_would_choose_is_refused(template):
    from ragmeter.core.errors import InvalidParameterError
    from ragmeter.records.http_source import HttpSource

    with pytest.raises(InvalidParameterError, match="never its host"):
        HttpSource(template)
    HttpSource("http://crm.internal/orders/{entity}?field={attribute}")  # path and query: fine
