"""``--to-phoenix URL``: each scored request's metrics as span annotations on its root span.

Phoenix's REST API (``POST {URL}/v1/span_annotations?sync=true``) takes, per annotation, the span
id, a name (the metric), the annotator kind (``LLM`` for a judged metric, ``CODE`` otherwise), a
result (``score``, ``label``, ``explanation``), metadata and an identifier. ragmeter's identifier
is ``ragmeter``: Phoenix keeps one annotation per (name, span, identifier), so sending one again
(after a restart) replaces it, never doubles it. The label is the cell's status (``scored``,
``not_computed``, ``failed``); the explanation says why there is no score, or, for a request
that retrieved several times, each retrieval's value.

The watcher's outbox is ``scored.jsonl`` itself: :class:`PhoenixOutbox` keeps how far it has
sent (``phoenix.json``, written atomically) and sends on from there after each poll. A span
Phoenix does not hold yet (its exporter is behind) is tried again on later polls for
``wait_s``, then skipped and said; a server that cannot be reached is said once and tried again.
Nothing but the URL given is called.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ragmeter._version import __version__
from ragmeter.core.errors import InvalidParameterError
from ragmeter.io.writer import write_text_atomic
from ragmeter.metrics import parse_measure
from ragmeter.metrics.kinds import JudgedSpec

IDENTIFIER = "ragmeter"
BATCH = 100


def annotator_kind(metric: str) -> str:
    """``LLM`` for a judged metric, ``CODE`` for one computed without a judge."""
    try:
        return "LLM" if isinstance(parse_measure(metric).spec, JudgedSpec) else "CODE"
    except InvalidParameterError:
        return "CODE"


def span_annotations(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The annotations of one scored record (``root_span_id``, ``metrics``, ``retrievals``?)."""
    out = []
    per = {m: [(r["id"], r["metrics"].get(m)) for r in record.get("retrievals") or []] for m in record["metrics"]}
    for metric, cell in record["metrics"].items():
        result: dict[str, Any] = {"label": cell["status"]}
        if cell["status"] == "scored":
            result["score"] = cell["value"]
        if cell.get("reason"):
            result["explanation"] = str(cell["reason"])
        elif per[metric]:
            result["explanation"] = "per retrieval: " + ", ".join(
                f"{rid} {c['value']:.3f}" if c and c["status"] == "scored" else f"{rid} {c['status'] if c else '-'}"
                for rid, c in per[metric])
        out.append({"span_id": record["root_span_id"], "name": metric, "annotator_kind": annotator_kind(metric),
                    "result": result, "identifier": IDENTIFIER,
                    "metadata": {"ragmeter_version": __version__, "request": record["id"]}})
    return out


class PhoenixError(Exception):
    """Phoenix answered with an error (``status``) or could not be reached (``status`` None)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def post(url: str, items: Sequence[dict[str, Any]], *, timeout: float = 10.0) -> None:
    """Send annotations; raises :class:`PhoenixError`."""
    import httpx

    try:
        reply = httpx.post(url.rstrip("/") + "/v1/span_annotations", params={"sync": "true"},
                           json={"data": list(items)}, timeout=timeout)
    except httpx.HTTPError as exc:
        raise PhoenixError(f"Phoenix at {url} could not be reached ({type(exc).__name__}: {exc})") from None
    if reply.status_code >= 300:
        raise PhoenixError(f"Phoenix at {url} answered {reply.status_code}: {reply.text[:200]}", reply.status_code)


def annotate(url: str, records: Iterable[dict[str, Any]], *, timeout: float = 10.0) -> int:
    """Send every record's annotations (records without a root span are skipped); how many were sent."""
    items = [a for r in records if r.get("root_span_id") for a in span_annotations(r)]
    for i in range(0, len(items), BATCH):
        post(url, items[i:i + BATCH], timeout=timeout)
    return len(items)


class PhoenixOutbox:
    """Sends ``scored_file``'s records to Phoenix as they are appended (see the module docstring)."""

    def __init__(self, url: str, scored_file: Path, state_file: Path, notes: list[str], *, wait_s: float = 120.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.url, self.scored_file, self.state_file, self.notes = url, scored_file, state_file, notes
        self.wait_s, self.clock = wait_s, clock
        self.sent = self.skipped = 0
        self.offset = self._load()
        self._down = False

    def _load(self) -> int:
        try:
            offset = json.loads(self.state_file.read_text(encoding="utf-8"))["offset"]
            return offset if isinstance(offset, int) and offset >= 0 else 0
        except (OSError, ValueError, KeyError, TypeError):
            return 0

    def _save(self) -> None:
        write_text_atomic(self.state_file, json.dumps({"offset": self.offset}))

    def pump(self) -> None:
        """Send what was scored since the last call, as far as Phoenix takes it."""
        try:
            with open(self.scored_file, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1
        pending: list[tuple[int, dict[str, Any]]] = []
        pos = self.offset
        for raw in data[:end].split(b"\n")[:-1]:
            pos += len(raw) + 1
            try:
                rec = json.loads(raw)
            except ValueError:
                rec = None
            pending.append((pos, rec if isinstance(rec, dict) and rec.get("root_span_id") else {}))
        start = self.offset
        try:
            for i in range(0, len(pending), BATCH):
                self._send(pending[i:i + BATCH])
        except PhoenixError as exc:
            if not self._down:
                self.notes.append(f"{exc}: annotations wait and are sent when it answers")
            self._down = True
        else:
            self._down = False
        if self.offset != start:
            self._save()

    def _send(self, batch: list[tuple[int, dict[str, Any]]]) -> None:
        items = [a for _, rec in batch if rec for a in span_annotations(rec)]
        try:
            if items:
                post(self.url, items)
            self.sent += len(items)
            self.offset = batch[-1][0]
            return
        except PhoenixError as exc:
            if exc.status != 404:
                raise
        for pos, rec in batch:  # a span Phoenix does not hold (yet): one record at a time
            try:
                if rec:
                    post(self.url, span_annotations(rec))
                    self.sent += len(rec["metrics"])
            except PhoenixError as exc:
                if exc.status != 404:
                    raise
                if self.clock() - float(rec.get("ts") or 0) < self.wait_s:
                    raise PhoenixError(f"Phoenix does not hold span {rec['root_span_id']} yet", 404) from None
                self.skipped += 1
                self.notes.append(f"Phoenix at {self.url} holds no span {rec['root_span_id']} (request {rec['id']}) "
                                  f"{self.wait_s:.0f} s after it was scored: its annotations are not sent")
            self.offset = pos
