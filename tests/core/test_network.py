"""Judge and embedder HTTP clients go through the standard proxy and CA variables: a judge
request reaches the test HTTP judge through a forwarding proxy on 127.0.0.1 (which saw it),
NO_PROXY sends it direct again, and REQUESTS_CA_BUNDLE becomes the CA bundle."""

from __future__ import annotations

import http.client
import ssl
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import certifi
import pytest

from ragmeter.core.network import http_options
from ragmeter.embeddings.backends import OpenAIEmbedder
from ragmeter.judges import Judge, OpenAIBackend, RetryPolicy
from tests import judge_server
from tests.judge_fixtures import answer, request
from tests.judges.backends.test_openai import ask

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


class ForwardingProxy(BaseHTTPRequestHandler):
    """A plain HTTP forward proxy: the request line holds the absolute URL; the proxy sends
    the request on and relays the answer, recording each URL it forwarded."""

    seen: list[str]

    def log_message(self, *args) -> None:
        return

    def do_POST(self) -> None:
        self.seen.append(self.path)
        target = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-connection", "connection")}
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
        conn.request("POST", target.path + (f"?{target.query}" if target.query else ""), body=body, headers=headers)
        reply = conn.getresponse()
        data = reply.read()
        self.send_response(reply.status)
        for k, v in reply.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()


@pytest.fixture
def proxy():
    seen: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Bound", (ForwardingProxy,), {"seen": seen}))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()


@pytest.fixture
def judge_http():
    srv, state = judge_server.start(answer)
    yield state
    srv.shutdown()


@pytest.fixture
def clean_env(monkeypatch):
    """No proxy setting from the machine running the tests (lower and upper case)."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def judge_for(url: str) -> Judge:
    return Judge(OpenAIBackend("gpt-test", base_url=url + "/v1", api_key="sk-test",
                               policy=RetryPolicy(max_retries=0, timeout=10)))


def test_a_judge_request_goes_through_http_proxy(clean_env, proxy, judge_http):
    proxy_url, seen = proxy
    clean_env.setenv("HTTP_PROXY", proxy_url)
    clean_env.setenv("NO_PROXY", "")  # nothing bypasses the proxy, not even 127.0.0.1
    assert ask(judge_for(judge_http.url), request("through the proxy")).ok
    assert seen == [judge_http.url + "/v1/chat/completions"]
    assert judge_http.count == 1  # the judge answered the proxied request


def test_no_proxy_sends_the_request_direct(clean_env, proxy, judge_http):
    proxy_url, seen = proxy
    clean_env.setenv("HTTP_PROXY", proxy_url)
    clean_env.setenv("NO_PROXY", "127.0.0.1")
    assert ask(judge_for(judge_http.url), request("direct")).ok
    assert seen == [] and judge_http.count == 1


def test_the_openai_embedder_goes_through_the_proxy(clean_env, proxy, judge_http):
    proxy_url, seen = proxy
    clean_env.setenv("http_proxy", proxy_url)  # the lower-case spelling too
    clean_env.setenv("no_proxy", "")
    vectors = OpenAIEmbedder("emb-test", base_url=judge_http.url + "/v1", api_key="sk-test").encode(["ab", "c"])
    assert vectors.shape[0] == 2 and seen == [judge_http.url + "/v1/embeddings"]


def test_requests_ca_bundle_is_the_ca_bundle():
    bundle = certifi.where()
    options = http_options({"REQUESTS_CA_BUNDLE": bundle})
    assert options["trust_env"] is True
    ctx = options["verify"]
    assert isinstance(ctx, ssl.SSLContext) and ctx.cert_store_stats()["x509_ca"] > 0
    assert "verify" not in http_options({"SSL_CERT_FILE": bundle, "REQUESTS_CA_BUNDLE": bundle})  # httpx reads it
    with pytest.raises(FileNotFoundError):
        http_options({"CURL_CA_BUNDLE": "/nonexistent/ca.pem"})
