"""Open a SQLite file that several processes share (the ledger, the record-lookup cache)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

SETUP_ATTEMPTS = 300  # x 0.1 s: up to 30 s, the same bound as the busy timeout


def open_shared(path: str, schema: str, *, pragmas: tuple[str, ...] = ()) -> sqlite3.Connection:
    """A connection in autocommit mode, WAL, a 30 s busy timeout, ``schema`` created.

    Two processes opening a new file at once can both need the lock that switching to WAL
    and creating the tables take; SQLite may then answer "locked" at once instead of
    waiting, so this setup is retried (bounded).
    """
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA busy_timeout=30000")
    for attempt in range(SETUP_ATTEMPTS):
        try:
            db.execute("PRAGMA journal_mode=WAL")
            for pragma in pragmas:
                db.execute(f"PRAGMA {pragma}")
            db.executescript(schema)
            return db
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == SETUP_ATTEMPTS - 1:
                raise
            time.sleep(0.1)
    raise AssertionError("unreachable")
