"""The OTLP receiver's durable intake: spans kept on disk from acknowledgment until scored.

One SQLite file (WAL, ``synchronous=FULL``: a commit is on disk before it returns) holds every
span the receiver acknowledged and has not handed on yet, grouped by trace, with the spans it
refused (and why) and the user feedback it was sent. The receiver answers 200 only after the
commit that stores a request's spans, so an acknowledged span survives a ``kill -9``.

A trace is **ready** when its root span (no parent) has arrived and ``settle`` seconds passed
without another of its spans (a child exported by another process arrives within that), or when
``quiet`` seconds passed without any span of it (a trace whose root never comes: a crash in the
app, a parent in another service). Past ``max_open`` open traces the oldest are handed on early
(``evicted``): what the spool holds is bounded on disk, and nothing of it is held in memory.

The watcher takes ready traces (:meth:`Spool.ready`), writes their results, and only then
deletes them (:meth:`Spool.forget`): a crash between the two hands them on again, and the
watcher's record of what it scored skips them. Row ids are ``AUTOINCREMENT`` (never reused), so
a quarantined item is named once across restarts.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.io.otlp import Rejected, Span

_SCHEMA = """
CREATE TABLE IF NOT EXISTS traces (
    id INTEGER PRIMARY KEY AUTOINCREMENT, trace_id TEXT NOT NULL UNIQUE,
    first_seen REAL NOT NULL, last_seen REAL NOT NULL, root INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS traces_last ON traces(last_seen);
CREATE TABLE IF NOT EXISTS spans (
    trace_id TEXT NOT NULL, span_id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (trace_id, span_id));
CREATE TABLE IF NOT EXISTS rejected (
    id INTEGER PRIMARY KEY AUTOINCREMENT, received REAL NOT NULL, reason TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS feedback (
    id INTEGER PRIMARY KEY AUTOINCREMENT, received REAL NOT NULL, body TEXT NOT NULL);
"""


@dataclass(frozen=True)
class ReadyTrace:
    """A trace handed on: its spool row id, trace id, spans, and why now (``root``, ``quiet``,
    ``evicted``)."""

    row: int
    trace_id: str
    spans: tuple[Span, ...]
    why: str


@dataclass(frozen=True)
class Stored:
    """A refused span or a feedback record, with its spool row id."""

    row: int
    received: float
    body: dict[str, Any]
    reason: str = ""


class Spool:
    """The spool file at ``path`` (see the module docstring)."""

    def __init__(self, path: str | Path, *, settle: float = 2.0, quiet: float = 30.0, max_open: int = 10_000) -> None:
        self.path = Path(path)
        self.settle, self.quiet, self.max_open = settle, quiet, max_open
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction under the lock: committed (on disk: ``synchronous=FULL``) when the
        block ends, rolled back on any error."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    # ---- the receiver's side: each call one transaction, on disk when it returns ----
    def add(self, spans: Sequence[Span], rejected: Sequence[Rejected] = (), *, now: float | None = None) -> None:
        """Store ``spans`` (a span sent twice, as an exporter's retry does, is kept once) and the
        refused ``rejected``, in one commit."""
        now = time.time() if now is None else now
        by_trace: dict[str, list[Span]] = {}
        for s in spans:
            by_trace.setdefault(s.trace_id, []).append(s)
        with self._transaction() as db:
            for trace, group in by_trace.items():
                root = int(any(s.parent_id is None for s in group))
                db.execute("INSERT INTO traces(trace_id, first_seen, last_seen, root) VALUES (?, ?, ?, ?) "
                           "ON CONFLICT(trace_id) DO UPDATE SET last_seen = excluded.last_seen, "
                           "root = MAX(root, excluded.root)", (trace, now, now, root))
                db.executemany("INSERT OR IGNORE INTO spans(trace_id, span_id, body) VALUES (?, ?, ?)",
                               [(s.trace_id, s.span_id, json.dumps(s.as_dict(), ensure_ascii=False)) for s in group])
            db.executemany("INSERT INTO rejected(received, reason, body) VALUES (?, ?, ?)",
                           [(now, r.reason, json.dumps(_rejected_body(r), ensure_ascii=False, default=str))
                            for r in rejected])

    def add_feedback(self, records: Iterable[dict[str, Any]], *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self._transaction() as db:
            db.executemany("INSERT INTO feedback(received, body) VALUES (?, ?)",
                           [(now, json.dumps(r, ensure_ascii=False)) for r in records])

    def open_traces(self) -> int:
        """Traces stored and not handed on for good (the receiver sheds load past a bound)."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM traces").fetchone()[0])

    # ---- the watcher's side ----
    def ready(self, limit: int, *, now: float | None = None) -> list[ReadyTrace]:
        """Up to ``limit`` traces ready to be read, oldest first; the oldest open ones past
        ``max_open`` first of all (evicted)."""
        now = time.time() if now is None else now
        with self._lock:
            total = int(self._db.execute("SELECT COUNT(*) FROM traces").fetchone()[0])
            over = max(0, total - self.max_open)
            rows = [(*r, "evicted") for r in self._db.execute(
                "SELECT id, trace_id, root, last_seen FROM traces ORDER BY id LIMIT ?", (min(over, limit),))]
            taken = {r[0] for r in rows}
            for r in self._db.execute(
                    "SELECT id, trace_id, root, last_seen FROM traces WHERE (root = 1 AND last_seen <= ?) "
                    "OR last_seen <= ? ORDER BY id LIMIT ?", (now - self.settle, now - self.quiet, limit)):
                if len(rows) >= limit:
                    break
                if r[0] not in taken:
                    rows.append((*r, "root" if r[2] else "quiet"))
            out = []
            for row, trace, _root, _last, why in rows:
                spans = tuple(Span.from_dict(json.loads(b)) for (b,) in self._db.execute(
                    "SELECT body FROM spans WHERE trace_id = ? ORDER BY rowid", (trace,)))
                out.append(ReadyTrace(row, trace, spans, why))
            return out

    def rejected(self, limit: int) -> list[Stored]:
        with self._lock:
            return [Stored(i, t, json.loads(b), reason) for i, t, reason, b in self._db.execute(
                "SELECT id, received, reason, body FROM rejected ORDER BY id LIMIT ?", (limit,))]

    def feedback(self, limit: int) -> list[Stored]:
        with self._lock:
            return [Stored(i, t, json.loads(b)) for i, t, b in self._db.execute(
                "SELECT id, received, body FROM feedback ORDER BY id LIMIT ?", (limit,))]

    def forget(self, traces: Iterable[ReadyTrace] = (), rejected: Iterable[int] = (),
               feedback: Iterable[int] = ()) -> None:
        """Delete what was handed on and recorded, in one commit: of a trace, the spans it was
        handed on with. A span of it that arrived since stays, with its trace, to be read when
        that is quiet (the watcher knows the trace by then: it is not scored twice)."""
        traces, rejected, feedback = list(traces), list(rejected), list(feedback)
        if not (traces or rejected or feedback):
            return
        with self._transaction() as db:
            db.executemany("DELETE FROM spans WHERE trace_id = ? AND span_id = ?",
                           [(t.trace_id, s.span_id) for t in traces for s in t.spans])
            db.executemany("DELETE FROM traces WHERE trace_id = ? AND NOT EXISTS "
                           "(SELECT 1 FROM spans WHERE spans.trace_id = traces.trace_id)",
                           [(t.trace_id,) for t in traces])
            db.executemany("UPDATE traces SET root = 0 WHERE trace_id = ?", [(t.trace_id,) for t in traces])
            db.executemany("DELETE FROM rejected WHERE id = ?", [(r,) for r in rejected])
            db.executemany("DELETE FROM feedback WHERE id = ?", [(r,) for r in feedback])


def _rejected_body(r: Rejected) -> dict[str, Any]:
    return {"trace_id": r.trace_id, "span_id": r.span_id, "span": r.span}
