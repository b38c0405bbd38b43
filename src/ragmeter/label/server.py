"""The labeling page's server: Python's ``http.server`` on 127.0.0.1, nothing else.

- The page (``page.html``) is static: no data is written into the HTML. It fetches JSON and
  builds the DOM with ``textContent``, so a chunk holding ``<script>`` or an ``onerror``
  attribute stays text. A Content-Security-Policy with a per-start nonce allows only the
  page's own script and style and connections to this server (no CDN, works offline).
- Every ``/api/`` request must carry the per-start token from the page (``X-Ragmeter-Token``)
  and a ``Host`` of 127.0.0.1 or localhost on this port: another site open in the browser can
  neither read the data (DNS rebinding) nor post labels (a custom header needs a CORS
  preflight that this server never grants).
- ``POST /api/event`` appends the event to the labels file and fsyncs it before answering. A
  click the page re-sends (same ``eid``) is acknowledged and not written twice.
- A token from an earlier start of the server is answered 403 with ``"code": "stale_token"``:
  the page says so, keeps the unsaved clicks in the browser and sends them after a reload.
- Bodies are read within bounds: a ``Content-Length`` that is missing (411), not a whole number
  (400), or over 64 KiB (413); a body sent slower than the read timeout (408); JSON nested too
  deeply or not UTF-8 (400). Each answer is JSON, and no handler error prints a traceback.

Endpoints: ``GET /``; ``GET /api/meta``; ``GET /api/progress?labeler=``; ``GET
/api/task?i=&labeler=``; ``GET /api/adjudicate?i=``; ``GET /api/agreement``; ``POST /api/event``.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ragmeter.label.agreement import agreement_report
from ragmeter.label.store import NAME, LabelStore
from ragmeter.label.tasks import Task

MAX_BODY = 64 * 1024
READ_TIMEOUT_S = 10.0  # a request (its headers and body) not received within this is dropped
STALE = {"error": "this page is from an earlier start of the server (its token is stale): reload the page; the "
                  "clicks it could not save are kept in this browser and saved after the reload",
         "code": "stale_token"}


class LabelApp:
    """The page's API over the tasks and the labels store (no HTTP here)."""

    def __init__(self, tasks: Sequence[Task], store: LabelStore, *, title: str = "", rel: int = 1) -> None:
        self.tasks = list(tasks)
        self.by_id = {t.id: t for t in self.tasks}
        self.store = store
        self.title = title
        self.rel = rel

    def _done(self, labeler: str, t: Task) -> bool:
        st = self.store.state
        if st.unanswerable.get(labeler, {}).get(t.id):
            return True
        graded = st.grades.get(labeler, {}).get(t.id, {})
        return all(c.id in graded for c in t.candidates)

    def progress(self, labeler: str) -> dict:
        done = [t.index for t in self.tasks if self._done(labeler, t)]
        todo = [t.index for t in self.tasks if t.index not in set(done)]
        resume = todo[0] if todo else max(len(self.tasks) - 1, 0)
        return {"total": len(self.tasks), "done": done, "resume": resume}

    def task(self, index: int, labeler: str) -> dict:
        t = self.tasks[index]
        st = self.store.state
        return {**t.as_dict(), "total": len(self.tasks), "labels": st.grades.get(labeler, {}).get(t.id, {}),
                "unanswerable": st.unanswerable.get(labeler, {}).get(t.id, False),
                "note": st.notes.get(labeler, {}).get(t.id, ""), "done": self._done(labeler, t)}

    def adjudicate(self, index: int) -> dict:
        t = self.tasks[index]
        st = self.store.state
        grades = {c.id: {w: g[t.id][c.id] for w, g in sorted(st.grades.items()) if c.id in g.get(t.id, {})}
                  for c in t.candidates}
        finals = {cid: {"grade": g, "by": by} for cid, (g, by) in st.finals.get(t.id, {}).items()}
        return {**t.as_dict(), "total": len(self.tasks), "grades": grades, "finals": finals,
                "unanswerable": {w: f[t.id] for w, f in sorted(st.unanswerable.items()) if t.id in f},
                "notes": {w: n[t.id] for w, n in sorted(st.notes.items()) if n.get(t.id)}}

    def event(self, body: Any) -> dict:
        if not isinstance(body, dict):
            raise TypeError("an event must be a JSON object")
        t = self.by_id.get(body.get("sample"))  # type: ignore[arg-type]
        if t is None:
            raise ValueError("unknown sample")
        if body.get("kind") in ("grade", "final") and body.get("chunk") not in {c.id for c in t.candidates}:
            raise ValueError("that chunk is not a candidate of this question")
        stored = self.store.append(body)
        return {"ok": True, "events": self.store.state.events, "at": stored["at"],
                **({"repeat": True} if stored.get("repeat") else {})}

    def meta(self) -> dict:
        return {"title": self.title, "total": len(self.tasks), "labelers": self.store.state.labelers,
                "labels_file": self.store.path.name, "rel": self.rel}

    def agreement(self) -> dict:
        return agreement_report(self.tasks, self.store.state, rel=self.rel)


def page_html() -> str:
    return resources.files("ragmeter.label").joinpath("page.html").read_text(encoding="utf-8")


class _Handler(BaseHTTPRequestHandler):
    server_version = "ragmeter-label"
    sys_version = ""
    app: LabelApp
    token: str
    port: int
    page: str
    timeout = READ_TIMEOUT_S  # the socket's: a client that stops sending never holds a handler

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal shows the URL only
        return

    def _host_ok(self) -> bool:
        host = self.headers.get("Host", "")
        allowed = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        origin = self.headers.get("Origin")
        return host in allowed and (origin is None or origin.removeprefix("http://") in allowed)

    def _send(self, status: int, body: bytes, ctype: str, extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, doc: Any) -> None:
        self._send(status, json.dumps(doc, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

    def _api_allowed(self) -> bool:
        if not self._host_ok():
            self._json(403, {"error": "wrong host"})
            return False
        given = self.headers.get("X-Ragmeter-Token", "")
        if not secrets.compare_digest(given.encode("utf-8", "replace"), self.token.encode()):
            # a well-formed token that is not this start's: the page outlived a restart of the server
            self._json(403, STALE if _token_shaped(given) else {"error": "missing or wrong token"})
            return False
        return True

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if url.path == "/":
            if not self._host_ok():
                return self._json(403, {"error": "wrong host"})
            nonce = secrets.token_urlsafe(16)
            html = self.page.replace("__NONCE__", nonce).replace("__TOKEN__", self.token)
            csp = (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; "
                   f"img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
            return self._send(200, html.encode("utf-8"), "text/html; charset=utf-8", {"Content-Security-Policy": csp})
        if url.path == "/favicon.ico":
            return self._send(204, b"", "image/x-icon")
        if not url.path.startswith("/api/") or not self._api_allowed():
            if not url.path.startswith("/api/"):
                self._json(404, {"error": "not found"})
            return None
        try:
            with self.app.store.lock:  # a consistent view; the reply is sent after the lock is released
                status, doc = self._get_api(url.path, q)
        except (ValueError, IndexError) as exc:
            status, doc = 400, {"error": str(exc)}
        return self._json(status, doc)

    def _get_api(self, path: str, q: dict) -> tuple[int, Any]:
        if path == "/api/meta":
            return 200, self.app.meta()
        if path == "/api/agreement":
            return 200, self.app.agreement()
        if path in ("/api/progress", "/api/task"):
            labeler = q.get("labeler", "")
            if not NAME.match(labeler):
                return 400, {"error": "give a labeler name"}
            if path == "/api/progress":
                return 200, self.app.progress(labeler)
            return 200, self.app.task(self._index(q), labeler)
        if path == "/api/adjudicate":
            return 200, self.app.adjudicate(self._index(q))
        return 404, {"error": "not found"}

    def _index(self, q: dict) -> int:
        i = int(q.get("i", "0"))
        if not 0 <= i < len(self.app.tasks):
            raise IndexError(f"no question {i}")
        return i

    def do_POST(self) -> None:
        if urlsplit(self.path).path != "/api/event":
            return self._json(404, {"error": "not found"})
        if not self._api_allowed():
            return None
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            self.close_connection = True  # the body is not read
            return self._json(415, {"error": "send JSON"})
        length, problem = _content_length(self.headers.get_all("Content-Length") or [])
        if problem is not None:
            self.close_connection = True
            return self._json(*problem)
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            self.close_connection = True
            return self._json(408, {"error": f"the body did not arrive within {READ_TIMEOUT_S:g} s"})
        if len(raw) < length:
            self.close_connection = True
            return self._json(400, {"error": f"the body ended after {len(raw)} of {length} bytes"})
        try:
            body = json.loads(raw or b"null")
        except RecursionError:
            return self._json(400, {"error": "the body is JSON nested too deeply"})
        except ValueError as exc:  # not JSON, not UTF-8
            return self._json(400, {"error": f"the body is not JSON ({exc})"[:300]})
        try:
            return self._json(200, self.app.event(body))
        except (ValueError, TypeError) as exc:
            return self._json(400, {"error": str(exc)})


def _token_shaped(value: str) -> bool:
    return len(value) == 32 and all(c in "0123456789abcdef" for c in value)


def _content_length(values: list[str]) -> tuple[int, tuple[int, dict] | None]:
    """The body's length, or the answer for a header that does not give one within bounds."""
    if not values:
        return 0, (411, {"error": "send a Content-Length"})
    if len(set(v.strip() for v in values)) > 1:
        return 0, (400, {"error": "Content-Length given twice, differently"})
    text = values[0].strip()
    if not (text.isascii() and text.isdigit()):
        return 0, (400, {"error": f"Content-Length must be a whole number of bytes, got {text[:20]!r}"})
    length = int(text) if len(text) <= 18 else MAX_BODY + 1  # no int() of a thousand digits
    if length > MAX_BODY:
        return 0, (413, {"error": f"the body is over {MAX_BODY} bytes"})
    return length, None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line, never a traceback: a client that went away is not worth one."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        print(f"ragmeter label: a request failed ({type(exc).__name__}: {exc})"[:300], file=sys.stderr)


class LabelServer:
    """``LabelServer(app).start()`` serves in a thread; ``serve_forever()`` in this one."""

    def __init__(self, app: LabelApp, *, port: int = 0) -> None:
        self.token = secrets.token_hex(16)
        class Handler(_Handler):
            pass

        Handler.app, Handler.token, Handler.page = app, self.token, page_html()
        self.httpd = _Server(("127.0.0.1", port), Handler)
        self.port = int(self.httpd.server_address[1])
        Handler.port = self.port
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> LabelServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def shutdown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
