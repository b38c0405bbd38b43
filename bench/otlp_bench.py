"""Benchmark: ``ragmeter watch --otlp`` intake, spans per second received and requests per second scored.

Makes N RAG traces with the OpenTelemetry SDK and the OpenInference conventions (a CHAIN root, a
RETRIEVER span with 3 documents, an LLM span: 3 spans a trace), encodes them once with the OTLP
exporter's own encoder into protobuf requests of 512 spans (the BatchSpanProcessor's default
batch), then, each in a fresh process on 127.0.0.1:

- ``ragmeter watch --otlp PORT --judge none`` (the default metrics, not computed without a judge:
  the cost measured is the intake's, not a judge's): the requests are posted by ``--clients``
  threads as fast as it acknowledges them (each acknowledged only once its spans are committed to
  disk); **received** is spans / the seconds from the first post to the last acknowledgment;
  **scored** is requests / the seconds from the first post until ``scored.jsonl`` holds every trace;
- a bare receiver for scale: Python's ``http.server`` reading each body and answering 200 without
  decoding or storing it (what HTTP alone costs here); the ratio is ragmeter's rate / its rate.

Prints each figure with the 1-minute load average when it was taken (the machine is shared).
A benchmark, not a test: nothing here asserts a rate.

    pip install -e ".[test,live,otel]"
    python bench/otlp_bench.py [--traces 2000] [--clients 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.otel_traces import free_port, listening  # noqa: E402

BARE = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def load_average() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def make_requests(n: int) -> tuple[list[bytes], int]:
    """The protobuf export requests of ``n`` traces, 512 spans each; and the number of spans."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from tests.otel_traces import rag_trace, recorded

    tracer, exporter = recorded()
    docs = [(f"c{j}", f"Chunk {j} says something about the product.", 0.9 - j / 10) for j in range(3)]
    for i in range(n):
        rag_trace(tracer, f"Question {i} about the product?", [docs], f"Answer {i} in a few words.")
    spans = exporter.get_finished_spans()
    return [encode_spans(spans[i:i + 512]).SerializeToString() for i in range(0, len(spans), 512)], len(spans)


def post_all(url: str, bodies: list[bytes], clients: int) -> float:
    """Post every body from ``clients`` threads; the seconds until the last was acknowledged."""
    import httpx

    queue = list(reversed(bodies))
    lock = threading.Lock()
    failures: list[int] = []

    def worker() -> None:
        with httpx.Client(timeout=60) as client:
            while True:
                with lock:
                    if not queue:
                        return
                    body = queue.pop()
                while True:
                    r = client.post(url, content=body, headers={"Content-Type": "application/x-protobuf"})
                    if r.status_code == 200:
                        break
                    if r.status_code != 503:
                        failures.append(r.status_code)
                        break
                    time.sleep(float(r.headers.get("Retry-After", "1")))

    start = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise SystemExit(f"refused: {failures[:5]}")
    return time.monotonic() - start


def lines(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=2)
    args = ap.parse_args()
    bodies, n_spans = make_requests(args.traces)
    print(f"{args.traces} traces, {n_spans} spans in {len(bodies)} protobuf requests, {args.clients} client(s)")

    port = free_port()
    bare = subprocess.Popen([sys.executable, "-c", BARE, str(port)])
    try:
        listening(port)
        load = load_average()
        bare_s = post_all(f"http://127.0.0.1:{port}/v1/traces", bodies, args.clients)
    finally:
        bare.terminate()
        bare.wait()
    print(f"bare http.server (no decoding, no storage): {n_spans / bare_s:,.0f} spans/s received (load {load})")

    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        port = free_port()
        watch = subprocess.Popen([sys.executable, "-m", "ragmeter", "watch", "--otlp", f"127.0.0.1:{port}",
                                  "--judge", "none", "--state", str(state), "--port", "0", "--interval", "0.05"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env={**os.environ, "NO_PROXY": "127.0.0.1"})
        try:
            listening(port)
            start = time.monotonic()
            load = load_average()
            received_s = post_all(f"http://127.0.0.1:{port}/v1/traces", bodies, args.clients)
            print(f"ragmeter watch --otlp: {n_spans / received_s:,.0f} spans/s received (load {load}), "
                  f"{(n_spans / received_s) / (n_spans / bare_s):.2f} x the bare server's rate")
            load = load_average()
            deadline = time.monotonic() + 600
            while lines(state / "scored.jsonl") < args.traces and time.monotonic() < deadline:
                time.sleep(0.05)
            scored_s = time.monotonic() - start
            done = lines(state / "scored.jsonl")
            print(f"ragmeter watch --otlp --judge none: {done / scored_s:,.1f} requests/s scored, first post to "
                  f"last record, the default --settle 2 s included ({done} of {args.traces}; load {load} -> "
                  f"{load_average()})")
        finally:
            watch.terminate()
            watch.wait()


if __name__ == "__main__":
    main()
