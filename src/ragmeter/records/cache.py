"""A store of record lookups, shaped like the judgment ledger: a key, an outcome, kept for reuse.

Key = sha256 of (source identity, entity, attribute). Only final outcomes are stored: a
value, or the source's own "no such record". Timeouts, errors and refusals are never
stored, so a rerun asks again. ``SqliteLookupCache`` may share the ledger's file (its own
table, ``record_lookups``), so one ``runs/ledger.sqlite`` holds a run's judgments and its
lookups; ``max_age_s`` makes older lookups count as absent (records change over time).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ragmeter.core.shared_sqlite import open_shared
from ragmeter.records.types import CannotVerify, LookupOutcome, RecordValue

SCHEMA = """
CREATE TABLE IF NOT EXISTS record_lookups (
    key TEXT PRIMARY KEY,
    source TEXT NOT NULL, entity TEXT NOT NULL, attribute TEXT NOT NULL,
    status TEXT NOT NULL,            -- value | no_record
    value TEXT, unit TEXT, reason TEXT,
    created_at REAL NOT NULL
);
"""


def lookup_key(source: str, entity: str, attribute: str) -> str:
    text = json.dumps({"source": source, "entity": entity, "attribute": attribute}, sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class StoredLookup:
    key: str
    outcome: LookupOutcome
    created_at: float


class LookupCache(Protocol):
    """What :class:`~ragmeter.records.lookup.RecordLookup` needs from a store."""

    def get(self, key: str) -> StoredLookup | None: ...

    def put(self, *, key: str, source: str, entity: str, attribute: str, outcome: LookupOutcome) -> None: ...


def cacheable(outcome: LookupOutcome) -> bool:
    return isinstance(outcome, RecordValue) or outcome.final


class MemoryLookupCache:
    """Lookups kept for the life of the object."""

    def __init__(self) -> None:
        self._items: dict[str, StoredLookup] = {}

    def get(self, key: str) -> StoredLookup | None:
        return self._items.get(key)

    def put(self, *, key: str, source: str, entity: str, attribute: str, outcome: LookupOutcome) -> None:
        if cacheable(outcome):
            self._items.setdefault(key, StoredLookup(key, outcome, time.time()))

    def __len__(self) -> int:
        return len(self._items)


class SqliteLookupCache:
    """Lookups in a SQLite file (WAL; ``INSERT OR IGNORE``, so concurrent writers cannot clash)."""

    def __init__(self, path: str | Path, *, max_age_s: float | None = None) -> None:
        self.path = str(path)
        self.max_age_s = max_age_s
        self._lock = threading.Lock()
        self._db = open_shared(self.path, SCHEMA)

    def get(self, key: str) -> StoredLookup | None:
        with self._lock:
            row = self._db.execute("SELECT status, value, unit, reason, created_at FROM record_lookups WHERE key = ?",
                                   (key,)).fetchone()
        if row is None:
            return None
        status, value, unit, reason, created_at = row
        if self.max_age_s is not None and time.time() - created_at > self.max_age_s:
            return None
        outcome: LookupOutcome = (RecordValue(json.loads(value), unit) if status == "value"
                                  else CannotVerify(reason or "no record", "no_record"))
        return StoredLookup(key, outcome, created_at)

    def put(self, *, key: str, source: str, entity: str, attribute: str, outcome: LookupOutcome) -> None:
        if not cacheable(outcome):
            return
        row: tuple[str, str | None, str | None, str | None]
        if isinstance(outcome, RecordValue):
            row = ("value", json.dumps(outcome.value), outcome.unit, None)
        else:
            row = ("no_record", None, None, outcome.reason)
        with self._lock:
            if self.max_age_s is not None:  # an expired row is replaced, not kept
                self._db.execute("DELETE FROM record_lookups WHERE key = ? AND created_at < ?",
                                 (key, time.time() - self.max_age_s))
            self._db.execute("INSERT OR IGNORE INTO record_lookups VALUES (?,?,?,?,?,?,?,?,?)",
                             (key, source, entity, attribute, *row, time.time()))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM record_lookups").fetchone()[0])

    def close(self) -> None:
        self._db.close()
