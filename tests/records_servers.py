"""Test servers for record sources: an HTTP records server on 127.0.0.1 that answers GET and
records any other method as a violation, and the table the MCP test server serves.

``start_records_server(table)`` serves ``GET /orders/<entity>`` as one JSON document per entity
(``{"status": "shipped", "total": {"value": 1299.0, "unit": "USD"}, ...}``); ``/slow/<entity>``
answers after ``state.delay`` seconds, ``/error/<entity>`` with 500, ``/text/<entity>`` with a
body that is not JSON, ``/redirect/<entity>`` with 302. Every request is recorded with its
method, path and headers; any method but GET goes to ``state.violations`` and gets 405.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

DATA = Path(__file__).parent / "data"
ORDERS = DATA / "records_orders.jsonl"


def documents(table: Path = ORDERS) -> dict[str, dict[str, Any]]:
    """The long table as one document per entity (units as {"value", "unit"})."""
    out: dict[str, dict[str, Any]] = {}
    for line in table.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            value = {"value": row["value"], "unit": row["unit"]} if row.get("unit") else row["value"]
            out.setdefault(row["entity"], {})[row["attribute"]] = value
    return out


@dataclass
class RecordsState:
    docs: dict[str, dict[str, Any]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    delay: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""


class RecordsHandler(BaseHTTPRequestHandler):
    state: RecordsState

    def log_message(self, *args: Any) -> None:
        return

    def _record(self, method: str) -> None:
        with self.state.lock:
            self.state.requests.append({"method": method, "path": self.path, "headers": dict(self.headers)})

    def do_GET(self) -> None:
        self._record("GET")
        path = urlsplit(self.path).path  # absolute-form (through a proxy) or origin-form
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if len(parts) != 2:
            return self._send(404, {"error": "no such path"})
        kind, entity = parts
        if kind == "slow":
            time.sleep(self.state.delay)
        if kind == "error":
            return self._send(500, {"error": "scripted failure"})
        if kind == "text":
            return self._send(200, "<html>not json</html>")
        if kind == "redirect":
            self.send_response(302)
            self.send_header("location", f"/orders/{entity}")
            self.send_header("content-length", "0")
            self.end_headers()
            return None
        doc = self.state.docs.get(entity)
        if doc is None:
            return self._send(404, {"error": f"no order {entity}"})
        return self._send(200, doc)

    def _refuse(self) -> None:
        self._record(self.command)
        with self.state.lock:
            self.state.violations.append(f"{self.command} {self.path}")
        self._send(405, {"error": "read-only"})

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_TRACE = do_CONNECT = _refuse

    def _send(self, status: int, body: Any) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


def start_records_server(docs: dict[str, dict[str, Any]] | None = None) -> tuple[ThreadingHTTPServer, RecordsState]:
    state = RecordsState(docs=documents() if docs is None else docs)
    handler = type("BoundRecordsHandler", (RecordsHandler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    return server, state
