"""The judgment ledger: every judgment stored before any metric reads it (SQLite, WAL).

Key = sha256 of (backend, model, decoding settings, prompt id and hash, schema hash,
canonical input hash). A rerun finds its judgments and makes no call; a run killed mid-way
finds the ones that completed; another metric variant reading the same judgments costs
nothing. Writes are ``INSERT OR IGNORE`` in their own transaction, so concurrent writers
(several processes, a killed one) can neither corrupt nor duplicate a judgment.
API keys and headers are never written here. A failed judgment is replaced only by a
retry (``replace_failed``), never an ok one. SQLite and OS failures (a damaged file, a full
disk, a folder that cannot be written) are ``StorageError`` naming the file and the fix.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ragmeter.core.errors import StorageError, os_error_fix

SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL, model TEXT NOT NULL, decoding TEXT NOT NULL,
    prompt_id TEXT NOT NULL, prompt_hash TEXT NOT NULL, schema_hash TEXT NOT NULL, input_hash TEXT NOT NULL,
    status TEXT NOT NULL,            -- ok | failed (the reply never validated)
    parsed TEXT, raw TEXT, error TEXT,
    input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, latency_s REAL NOT NULL,
    calls INTEGER NOT NULL, reasks INTEGER NOT NULL, created_at REAL NOT NULL,
    logprobs TEXT                    -- token log-probabilities when the backend gave them
);
"""


COLUMNS = ("key", "backend", "model", "decoding", "prompt_id", "prompt_hash", "schema_hash", "input_hash", "status",
           "parsed", "raw", "error", "input_tokens", "output_tokens", "latency_s", "calls", "reasks", "created_at",
           "logprobs")


@dataclass(frozen=True)
class Entry:
    key: str
    status: str
    parsed: Any
    raw: str | None
    error: str | None
    input_tokens: int
    output_tokens: int
    calls: int
    reasks: int
    prompt_id: str
    model: str
    logprobs: Any = None


def _fix(exc: Exception) -> str:
    text = str(exc).lower()
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return ("the ledger file is damaged: move it aside (the runs keep their results; judgments not in "
                "another ledger will be asked again) or point --ledger at another file")
    if "full" in text:
        return "free some disk space (or point --ledger at a disk with room) and run again"
    if "readonly" in text or "read-only" in text or "unable to open" in text or "permission" in text:
        return "make the ledger file and its folder writable, or point --ledger at another file"
    if isinstance(exc, OSError):
        return os_error_fix(exc)
    return "check the ledger file, or point --ledger at another file"


class Ledger:
    """A SQLite file of judgments. ``Ledger(":memory:")`` for a throwaway one."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        with self._guard("open"):
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            self._setup()

    @contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        """SQLite and OS errors as ``StorageError`` naming the file and the fix."""
        try:
            yield
        except (sqlite3.DatabaseError, OSError) as exc:
            raise StorageError(f"the judgment ledger cannot be {'opened' if doing == 'open' else doing} "
                               f"({type(exc).__name__}: {exc})", file=self.path, fix=_fix(exc)) from None

    def _setup(self) -> None:
        self._db.execute("PRAGMA busy_timeout=30000")
        # Two processes opening a new ledger at once can both need the lock that switching
        # to WAL and creating the table take; SQLite may then answer "locked" at once
        # instead of waiting, so this setup is retried (bounded).
        for attempt in range(300):
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(SCHEMA)
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 299:
                    raise
                time.sleep(0.1)

    def get(self, key: str) -> Entry | None:
        with self._guard("read"):
            return self._get(key)

    def _get(self, key: str) -> Entry | None:
        row = self._db.execute(
            "SELECT key, status, parsed, raw, error, input_tokens, output_tokens, calls, reasks, prompt_id, model, "
            "logprobs FROM judgments WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return Entry(key=row[0], status=row[1], parsed=json.loads(row[2]) if row[2] is not None else None,
                     raw=row[3], error=row[4], input_tokens=row[5], output_tokens=row[6], calls=row[7], reasks=row[8],
                     prompt_id=row[9], model=row[10], logprobs=json.loads(row[11]) if row[11] is not None else None)

    def put(self, *, key: str, backend: str, model: str, decoding: dict, prompt_id: str, prompt_hash: str,
            schema_hash: str, input_hash: str, status: str, parsed: Any, raw: str | None, error: str | None,
            input_tokens: int, output_tokens: int, latency_s: float, calls: int, reasks: int,
            logprobs: Any = None, replace_failed: bool = False) -> None:
        """Store a judgment (``INSERT OR IGNORE``); ``replace_failed``: a retry's outcome replaces
        a stored failure (never an ok judgment)."""
        sql = "INSERT OR IGNORE INTO judgments VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        if replace_failed:  # one statement: a kill leaves the old entry or the new one
            sql = ("INSERT INTO judgments VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET "
                   + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[1:]) + " WHERE judgments.status != 'ok'")
        with self._guard("written"):
            self._db.execute(sql, (key, backend, model, json.dumps(decoding, sort_keys=True), prompt_id, prompt_hash, schema_hash,
             input_hash, status, json.dumps(parsed) if parsed is not None else None, raw, error,
             input_tokens, output_tokens, latency_s, calls, reasks, time.time(),
             json.dumps(logprobs) if logprobs is not None else None))

    def __len__(self) -> int:
        with self._guard("read"):
            return int(self._db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])

    def keys(self) -> Iterator[str]:
        with self._guard("read"):
            rows = self._db.execute("SELECT key FROM judgments").fetchall()
        for (key,) in rows:
            yield key

    def merge_from(self, path: str | Path) -> int:
        """Copy every judgment of the ledger file at ``path`` into this one (``INSERT OR IGNORE``:
        a key already here is kept); returns how many were added. A missing file adds none."""
        if not Path(path).exists():
            return 0
        before = len(self)
        self._db.execute("ATTACH DATABASE ? AS other", (str(path),))
        try:
            self._db.execute("INSERT OR IGNORE INTO judgments SELECT * FROM other.judgments")
        finally:
            self._db.execute("DETACH DATABASE other")
        return len(self) - before

    def close(self) -> None:
        self._db.close()


class LayeredLedger(Ledger):
    """Writes to its own file; reads its own entries, then those of a ``fallback`` ledger file
    (when it exists), which it never writes. A Ray shard stores its judgments apart and still
    finds the run's; :meth:`Ledger.merge_from` brings them together afterwards."""

    def __init__(self, path: str | Path, fallback: str | Path | None) -> None:
        super().__init__(path)
        self.fallback = Ledger(fallback) if fallback is not None and Path(fallback).exists() else None

    def get(self, key: str) -> Entry | None:
        return super().get(key) or (self.fallback.get(key) if self.fallback is not None else None)

    def close(self) -> None:
        super().close()
        if self.fallback is not None:
            self.fallback.close()
