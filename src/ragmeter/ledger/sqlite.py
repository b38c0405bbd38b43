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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.core.errors import StorageError, os_error_fix
from ragmeter.core.shared_sqlite import open_shared

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
    """A SQLite file of judgments: what makes a rerun, a resumed run or a new metric variant free.

    :class:`~ragmeter.judges.Judge` stores each judgment here (``put``) before any metric reads
    it and looks it up (``get``) before asking its backend. Writes are ``INSERT OR IGNORE``, so
    several processes may share one file; :meth:`merge_from` brings another ledger file's
    judgments in (the Ray engine's shards). No API key or header is ever written.

    Parameters
    ----------
    path : str or Path
        The SQLite file (created with its folder when missing), or ``":memory:"`` for a
        throwaway ledger.

    Raises
    ------
    StorageError
        The file cannot be opened, read or written (damaged, full disk, read-only, or locked by
        another process for 30 seconds), with the file and the fix.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> ledger = Ledger(os.path.join(folder, "ledger.sqlite"))
    >>> ledger.put(key="k1", backend="scripted", model="m", decoding={}, prompt_id="claims.verify",
    ...            prompt_hash="h", schema_hash="s", input_hash="i", status="ok", parsed={"verdict": "supported"},
    ...            raw=None, error=None, input_tokens=10, output_tokens=2, latency_s=0.1, calls=1, reasks=0)
    >>> ledger.get("k1").parsed, len(ledger), ledger.get("k2")
    ({'verdict': 'supported'}, 1, None)
    >>> shard = Ledger(os.path.join(folder, "shard.sqlite"))
    >>> shard.put(key="k2", backend="scripted", model="m", decoding={}, prompt_id="claims.verify",
    ...           prompt_hash="h", schema_hash="s", input_hash="j", status="failed", parsed=None,
    ...           raw="not JSON", error="no JSON object", input_tokens=10, output_tokens=2, latency_s=0.1,
    ...           calls=3, reasks=2)
    >>> shard.close()
    >>> ledger.merge_from(os.path.join(folder, "shard.sqlite")), sorted(ledger.keys())
    (1, ['k1', 'k2'])
    >>> ledger.close()
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        with self._guard("open"):
            self._db = open_shared(self.path, SCHEMA, pragmas=("synchronous=NORMAL",))

    @contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        """SQLite and OS errors as ``StorageError`` naming the file and the fix."""
        try:
            yield
        except (sqlite3.DatabaseError, OSError) as exc:
            raise StorageError(f"the judgment ledger cannot be {'opened' if doing == 'open' else doing} "
                               f"({type(exc).__name__}: {exc})", file=self.path, fix=_fix(exc)) from None

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
            sql = ("INSERT INTO judgments VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                   "ON CONFLICT(key) DO UPDATE SET "
                   + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[1:]) + " WHERE judgments.status != 'ok'")
        with self._guard("written"):
            self._db.execute(sql, (key, backend, model, json.dumps(decoding, sort_keys=True), prompt_id, prompt_hash,
                                   schema_hash,
             input_hash, status, json.dumps(parsed) if parsed is not None else None, raw, error,
             input_tokens, output_tokens, latency_s, calls, reasks, time.time(),
             json.dumps(logprobs) if logprobs is not None else None))

    def seconds_per_call(self, backend: str, model: str) -> dict[str, list[float]]:
        """prompt id -> the seconds each stored judgment of ``backend`` / ``model`` took per call
        made (its latency over its calls: a re-ask is a call), for the dry run's estimate."""
        with self._guard("read"):
            rows = self._db.execute("SELECT prompt_id, latency_s, calls FROM judgments WHERE backend = ? AND "
                                    "model = ? AND calls > 0 AND latency_s > 0", (backend, model)).fetchall()
        out: dict[str, list[float]] = {}
        for prompt_id, latency, calls in rows:
            out.setdefault(prompt_id, []).append(latency / calls)
        return out

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
