"""What the watcher reads from the OTLP receiver's spool, in the shape it reads a log's lines.

Each :meth:`TraceIntake.read` hands on, as :class:`Item`\\ s already parsed: spans the receiver
refused (quarantined with their reason), user feedback, and ready traces, each read as one RAG
request (:func:`ragmeter.io.traces.read_trace`: one sample per retrieval), a trace that is not
one (no retriever: skipped, counted) or one that cannot be read (quarantined). Nothing leaves the
spool until the watcher has written what it made of it and calls :meth:`save` (the log tail's
contract), so a kill between the two hands the same items on again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.otlp import Span
from ragmeter.io.traces import NotRequest, read_trace, request_samples
from ragmeter.live.source import Feedback, LoggedRequest, Rejected, Skipped, feedback
from ragmeter.live.spool import ReadyTrace, Spool, Stored

SOURCE = "otlp"


@dataclass(frozen=True)
class Item:
    """One thing read from the spool, with the fields of a log :class:`~ragmeter.live.tail.Line`
    the watcher's quarantine records (``file``: which table, ``start``: its row id, never reused)."""

    file: str
    start: int
    body: Any  # what was received, written to the quarantine file as JSON when it is refused
    parsed: LoggedRequest | Feedback | Rejected | Skipped
    name: str = SOURCE
    number: int | None = None
    torn: bool = False
    kind: str = ""  # a log line's cut (``long``, ``rest``): never, for an item
    ready: ReadyTrace | None = None  # a trace: what the spool forgets (the spans it was read with)

    @property
    def end(self) -> int:
        return self.start

    @property
    def raw(self) -> bytes:
        return json.dumps(self.body, ensure_ascii=False, default=_plain).encode()


class TraceIntake:
    """The spool as the watcher's source (see the module docstring)."""

    def __init__(self, spool: Spool, *, batch: int = 16) -> None:
        self.spool = spool
        self.batch = batch
        self.more = False
        self.current = None  # no file: nothing for a log's offset
        self._done: dict[str, list[Any]] = {"traces": [], "rejected": [], "feedback": []}

    def read(self) -> list[Item]:
        out: list[Item] = [_rejected(r) for r in self.spool.rejected(self.batch)]
        out += [_feedback(f) for f in self.spool.feedback(self.batch)]
        ready = self.spool.ready(self.batch)
        out += [_trace(t) for t in ready]
        self.more = len(ready) >= self.batch
        return out

    def advance(self, item: Item) -> None:
        kind = item.file.split(":", 1)[1]
        self._done[kind].append(item.ready if kind == "traces" else item.start)

    def save(self) -> None:
        """Forget, in one commit, what the watcher consumed (after it wrote the results)."""
        done, self._done = self._done, {"traces": [], "rejected": [], "feedback": []}
        self.spool.forget(done["traces"], done["rejected"], done["feedback"])

    def close(self) -> None:
        self.spool.close()


def _rejected(r: Stored) -> Item:
    return Item(f"{SOURCE}:rejected", r.row, r.body, Rejected(f"span refused: {r.reason}"))


def _feedback(f: Stored) -> Item:
    try:
        parsed: Feedback | Rejected = feedback(f.body.get("request_id"), f.body.get("value"),
                                               f.body.get("ts", f.received))
    except InvalidInputError as exc:
        parsed = Rejected(f'feedback field "{exc.field}": {exc.problem}' if exc.field else exc.problem)
    return Item(f"{SOURCE}:feedback", f.row, f.body, parsed)


def _trace(t: ReadyTrace) -> Item:
    req = read_trace(t.spans)
    parsed: LoggedRequest | Rejected | Skipped
    if isinstance(req, NotRequest):
        parsed = Rejected(req.reason) if req.malformed else Skipped(req.reason)
    else:
        samples = request_samples(req, extra={"completed": t.why})
        parsed = LoggedRequest(req.id, req.ts, samples[-1], samples, req.root_span_id)
    return Item(f"{SOURCE}:traces", t.row, t.spans, parsed, ready=t)


def _plain(value: Any) -> Any:
    return value.as_dict() if isinstance(value, Span) else str(value)
