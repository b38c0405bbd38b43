"""One process at a time on a run directory: the lock a run holds while it is written.

The process that starts a run, or resumes one, holds an exclusive lock on ``<run>/.lock``
(``flock`` on POSIX, ``msvcrt.locking`` on Windows) until it ends. A second ``--resume`` of
the same run, while the first still runs, is refused at once with the holder's pid (two
resumes both asked for the judgments still missing and paid for them twice). The operating
system drops the lock when its process dies, so a killed run can be resumed straight away:
there is no stale lock to remove.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ragmeter.core.errors import StorageError, os_error_fix
from ragmeter.core.settings import InvalidSettingError

LOCK_NAME = ".lock"


class RunLocked(InvalidSettingError):
    """Another process holds the run directory (it is running or being resumed)."""


def _try_lock(f: IO[str]) -> bool:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def acquire(run: Path) -> IO[str]:
    """Lock ``run`` for this process; the open lock file is returned (closing it releases the
    lock). Raises :class:`RunLocked` when another process holds it."""
    path = Path(run) / LOCK_NAME
    try:
        f = open(path, "a+", encoding="utf-8")  # noqa: SIM115 -- held open for the run's life
    except OSError as exc:
        raise StorageError(f"the run directory cannot be locked ({exc.strerror or exc})", file=str(path),
                           fix=os_error_fix(exc)) from None
    if not _try_lock(f):
        f.seek(0)
        holder = f.read().strip() or "another process"
        f.close()
        raise RunLocked("resume", f"the run {run} is being written by {holder} right now: wait for it to end "
                                  f"(`ragmeter runs` shows its status), then resume it if it did not complete")
    f.seek(0)
    f.truncate()
    f.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
    f.flush()
    return f


@contextmanager
def holding(run: Path | None) -> Iterator[None]:
    """The lock on ``run`` for the block (nothing when ``run`` is None)."""
    if run is None:
        yield
        return
    f = acquire(run)
    try:
        yield
    finally:
        f.close()
