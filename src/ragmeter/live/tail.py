"""Following a log that rotates: every complete line of every file the log has been, once.

A production log is truncated in place (logrotate ``copytruncate``) or renamed and recreated
(``create``, ``mv log log.1``). The tail keeps, per file, its identity (device and inode), the
byte offset read up to, the line number, and a fingerprint of what it read: sha256 of the first
and of the last (up to) 256 bytes before the offset. Each :meth:`LogTail.read`:

- keeps the current file open. When its size falls below the offset, or the bytes before the
  offset no longer match the fingerprint, it was truncated (or rewritten): the rotated copy (a
  sibling such as ``LOG.1`` or ``LOG-20240101`` holding the same bytes up to the offset) is read
  from the offset to its end, then the file from its start;
- when the path names another file (another device or inode), the old one was renamed: it stays
  open and is read to its end, and on while the writer still appends to it (until it has not
  changed for ``linger`` seconds), and the new file from its start;
- holds a half-written last line until its newline arrives; one left unfinished in a rotated
  file that stopped changing is given once, flagged ``torn`` (it is never completed).

Nothing moves until the reader says what it consumed (:meth:`advance`) and :meth:`save`\\ s: the
state is written atomically (a temporary file, fsync'd, renamed) and keyed by inode, so a
restarted watcher finds a file renamed while it was down (by inode among the log's siblings, or
a copy by its fingerprint) and resumes exactly where it stopped. What is seen (a truncation, a
replacement, a rotated file that cannot be found) is said in ``notes``, once.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

#: Bytes read per file and read at most (more only to finish one longer line).
READ_BYTES = 8 << 20
#: Bytes at the start and before the offset that identify what was read.
FP_BYTES = 256
#: Seconds a renamed file stays open after its last change (its writer may not have reopened yet).
LINGER_S = 30.0
#: Rotated names that are compressed: never read (their unread tail, if any, is said lost).
_PACKED = (".gz", ".bz2", ".xz", ".zst", ".zip", ".lz4", ".br")
_SIBLINGS = 500  # directory entries looked at, at most, to find a rotated file


@dataclass(frozen=True)
class Line:
    """One line of one file: where it starts and ends, its number (None when unknown), its bytes
    without the newline. ``torn``: the unfinished last line of a rotated file, given up on."""

    file: str
    name: str
    start: int
    end: int
    number: int | None
    raw: bytes
    torn: bool = False


@dataclass
class _File:
    dev: int
    ino: int
    name: str  # where it was last seen
    offset: int = 0
    line: int | None = 0
    fp: str | None = ""  # None: not known yet (a state from before fingerprints)
    gen: int = 0  # bumped on each truncation: the same inode holding new bytes is a new file
    static: bool = False  # a copy made by rotation: nothing more is written to it
    handle: BinaryIO | None = field(default=None, repr=False)
    done: bool = False  # its torn tail was given: retire it once consumed
    stale: bool = False  # advanced since its fingerprint was taken

    @property
    def key(self) -> str:
        return f"{self.dev}:{self.ino}" + (f"#{self.gen}" if self.gen else "")

    def as_dict(self) -> dict[str, Any]:
        return {"dev": self.dev, "ino": self.ino, "name": self.name, "offset": self.offset, "line": self.line,
                "fp": self.fp, "gen": self.gen, "static": self.static}


def fingerprint(f: BinaryIO, offset: int) -> str:
    """sha256 over the first and the last ``min(offset, FP_BYTES)`` bytes before ``offset``."""
    n = min(offset, FP_BYTES)
    f.seek(0)
    head = f.read(n)
    f.seek(offset - n)
    tail = f.read(n)
    return hashlib.sha256(head + b"|" + tail).hexdigest()[:32]


def _identity(f: BinaryIO) -> tuple[int, int, int]:
    st = os.fstat(f.fileno())
    return st.st_dev, st.st_ino, st.st_size


class LogTail:
    """The files behind ``path``, oldest first (the last one is the file the path names now),
    each read from where the reader stopped; the state lives in ``state_file``."""

    def __init__(self, path: str | Path, state_file: Path, notes: list[str], *, linger: float = LINGER_S) -> None:
        self.path = Path(path)
        self.state_file = state_file
        self.notes = notes
        self.linger = linger
        self.files: list[_File] = []
        self.current: _File | None = None
        self.more = False  # the last read stopped at its byte bound: more complete lines wait
        self._saved: dict | None = None
        self._restore()

    # ---- reading ----
    def read(self, max_bytes: int = READ_BYTES) -> list[Line]:
        """Complete lines not yet consumed, oldest file first; nothing moves until :meth:`advance`."""
        self._refresh()
        self._follow()
        self.more = False
        out: list[Line] = []
        for f in list(self.files):
            out += self._lines(f, max_bytes)
        return out

    def advance(self, line: Line) -> None:
        """Mark ``line`` consumed (lines are advanced in the order :meth:`read` gave them)."""
        for f in self.files:
            if f.key == line.file:
                f.offset, f.line, f.stale = line.end, line.number, True
                f.done = f.done or line.torn
                return

    def _refresh(self) -> None:
        for f in self.files:
            if f.stale and f.handle is not None:
                f.fp, f.stale = fingerprint(f.handle, f.offset), False

    def save(self) -> None:
        """Write the state atomically, after retiring rotated files read to their end."""
        self._refresh()
        now = time.time()
        keep = []
        for f in self.files:
            if f is not self.current and f.handle is not None:
                st = os.fstat(f.handle.fileno())
                if f.offset >= st.st_size and (f.static or f.done or now - st.st_mtime > self.linger):
                    f.handle.close()
                    continue
            keep.append(f)
        self.files = keep
        cur = self.current
        doc = {"version": 2, "offset": cur.offset if cur else 0, "line": cur.line if cur else 0,
               "files": [f.as_dict() for f in self.files], "current": cur.key if cur else None}
        if doc == self._saved:
            return
        tmp = self.state_file.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as out:
            out.write(json.dumps(doc))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.state_file)
        self._saved = doc

    def close(self) -> None:
        for f in self.files:
            if f.handle is not None:
                f.handle.close()
                f.handle = None

    def _lines(self, f: _File, max_bytes: int) -> list[Line]:
        if f.handle is None:
            return []
        f.handle.seek(f.offset)
        data = f.handle.read(max_bytes)
        while data and b"\n" not in data:
            more = f.handle.read(max(max_bytes, len(data)))
            if not more:
                break
            data += more
        end = data.rfind(b"\n")
        out, pos, number = [], f.offset, f.line
        if end >= 0:
            for raw in data[:end + 1].split(b"\n")[:-1]:
                number = None if number is None else number + 1
                out.append(Line(f.key, f.name, pos, pos + len(raw) + 1, number, raw))
                pos += len(raw) + 1
            self.more = self.more or len(data) >= max_bytes
        rest = data[end + 1:]
        if rest and f is not self.current and not self.more and self._given_up(f):
            number = None if number is None else number + 1
            out.append(Line(f.key, f.name, pos, pos + len(rest), number, rest, torn=True))
        return out

    def _given_up(self, f: _File) -> bool:
        """A rotated file whose unfinished last line will not be finished: a copy, or one that has
        not changed for ``linger`` seconds."""
        assert f.handle is not None
        return f.static or time.time() - os.fstat(f.handle.fileno()).st_mtime > self.linger

    # ---- noticing rotation ----
    def _follow(self) -> None:
        cur = self.current
        if cur is not None and cur.handle is not None:
            size = os.fstat(cur.handle.fileno()).st_size
            if size < cur.offset or fingerprint(cur.handle, cur.offset) != cur.fp:
                self._truncated(cur, size)
        try:
            st = os.stat(self.path)
        except OSError:
            return  # moved away and not recreated yet: the open file is read on
        if cur is not None and (st.st_dev, st.st_ino) == (cur.dev, cur.ino):
            return
        fresh = self._open(self.path)
        if fresh is None:
            return
        if cur is not None:
            self.notes.append(f"{self.path} was replaced by another file (rotated): reading the rest of the old "
                              f"one, then the new one from its start")
        self.current = fresh
        self.files.append(fresh)

    def _truncated(self, cur: _File, size: int) -> None:
        """``cur`` shrank below the offset or was rewritten: its copy's unread tail, then its start."""
        copy = self._find_copy(cur) if cur.offset else None
        where = (f"reading the unread rest from its rotated copy {copy.name}, then" if copy is not None else
                 "no rotated copy holding its unread rest was found next to it; reading")
        self.notes.append(f"{self.path} was truncated ({size} bytes, below the {cur.offset} already read, or "
                          f"rewritten): {where} {self.path.name} from its start")
        if copy is not None:
            self.files.insert(self.files.index(cur), copy)
        cur.offset, cur.line, cur.gen, cur.done = 0, 0, cur.gen + 1, False
        cur.fp = fingerprint(cur.handle, 0) if cur.handle is not None else ""

    def _open(self, path: Path, **kw: Any) -> _File | None:
        try:
            handle = open(path, "rb")  # noqa: SIM115 - kept open: a renamed file is read on
        except OSError:
            return None
        dev, ino, _size = _identity(handle)
        return _File(dev, ino, path.name, handle=handle, fp=fingerprint(handle, 0), **kw)

    def _siblings(self) -> list[Path]:
        """Files next to the log whose names start like it (``LOG.1``, ``LOG-20240101``, ``LOG.old``)."""
        base, stem = self.path.name, self.path.stem
        out = []
        try:
            with os.scandir(self.path.parent if str(self.path.parent) else ".") as it:
                for n, entry in enumerate(it):
                    if n >= _SIBLINGS:
                        break
                    name = entry.name
                    if name == base or not any(name.startswith(s) and name[len(s):len(s) + 1] in (".", "-", "_")
                                               for s in {base, stem} if s):
                        continue
                    if name.endswith(_PACKED) or not entry.is_file(follow_symlinks=False):
                        continue
                    out.append(Path(entry.path))
        except OSError:
            return []
        return sorted(out, key=lambda p: p.name)

    def _tracked(self) -> set[tuple[int, int]]:
        return {(f.dev, f.ino) for f in self.files}

    def _find_copy(self, f: _File) -> _File | None:
        """A sibling that holds ``f``'s bytes up to its offset (same fingerprint), not tracked yet."""
        for p in self._siblings():
            found = self._open(p, offset=f.offset, line=f.line, static=True)
            if found is None:
                continue
            size = _identity(found.handle)[2]  # type: ignore[arg-type]
            if ((found.dev, found.ino) not in self._tracked() and size >= f.offset
                    and fingerprint(found.handle, f.offset) == f.fp):  # type: ignore[arg-type]
                found.fp = f.fp
                return found
            found.handle.close()  # type: ignore[union-attr]
        return None

    def _find_inode(self, f: _File) -> tuple[_File, bool] | None:
        """``f`` itself among the log's siblings (renamed while no watcher ran), and whether it still
        holds what was read (same fingerprint: else it was also truncated, and is read from its start)."""
        for p in self._siblings():
            try:
                st = os.stat(p)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) != (f.dev, f.ino):
                continue
            found = self._open(p, offset=f.offset, line=f.line, gen=f.gen, static=f.static)
            if found is None or found.handle is None:
                continue
            if st.st_size >= f.offset and fingerprint(found.handle, f.offset) == f.fp:
                found.fp = f.fp
                return found, True
            found.offset, found.line, found.gen, found.fp = 0, 0, f.gen + 1, fingerprint(found.handle, 0)
            return found, False
        return None

    # ---- the stored state ----
    def _restore(self) -> None:
        """Find each stored file again: the log itself (same inode and fingerprint), a rotated
        sibling (by inode, or a copy by fingerprint), or say it is lost; then the log."""
        stored = self._load()
        if stored is None:
            self._follow()
            return
        here = self._open(self.path)
        cur_key = stored["current"]
        for entry in stored["files"]:
            f = _File(**{k: entry[k] for k in ("dev", "ino", "name", "offset", "line", "fp", "gen", "static")})
            is_current = f.key == cur_key
            if here is not None and (here.dev, here.ino) == (f.dev, f.ino):
                size = _identity(here.handle)[2]  # type: ignore[arg-type]
                if f.fp is None or (size >= f.offset and fingerprint(here.handle, f.offset) == f.fp):  # type: ignore[arg-type]
                    here.offset, here.line, here.gen, here.static = f.offset, f.line, f.gen, False
                    here.fp = fingerprint(here.handle, f.offset)  # type: ignore[arg-type]
                    self.files.append(here)
                    self.current, here = here, None
                    continue
                copy = self._find_copy(f) if f.offset else None
                self.notes.append(f"{self.path} was truncated or rewritten while no watcher ran: "
                                  + (f"reading the unread rest from {copy.name}, then" if copy else "reading")
                                  + f" {self.path.name} from its start")
                if copy is not None:
                    self.files.append(copy)
                here.gen = f.gen + 1
                continue
            moved = self._find_inode(f)
            if moved is not None and not moved[1]:  # renamed, and truncated too: its copy, then its new start
                copy = self._find_copy(f) if f.offset else None
                self.notes.append(f"{self.path} was truncated and rotated while no watcher ran: reading "
                                  + (f"the unread rest from {copy.name}, then " if copy else "")
                                  + f"{moved[0].name} and {self.path.name} from their start")
                self.files += [copy, moved[0]] if copy is not None else [moved[0]]
                continue
            found = moved[0] if moved is not None else (self._find_copy(f) if f.offset else None)
            if found is not None:
                if is_current:
                    self.notes.append(f"{self.path} was rotated while no watcher ran: reading the rest of "
                                      f"{found.name}, then {self.path.name} from its start")
                self.files.append(found)
            else:
                self.notes.append(f"the file {f.name} (inode {f.ino}) that {self.path} was, read up to byte "
                                  f"{f.offset}, is gone (deleted or compressed): what it held after that "
                                  f"cannot be read")
        if here is not None:
            self.files.append(here)
            self.current = here

    def _load(self) -> dict | None:
        """The stored state, None without one (or when it is damaged: said in ``notes``). The
        first format (``{"offset", "line"}``, no inode) is taken as the log's current file."""
        if not self.state_file.exists():
            return None
        try:
            data = json.loads(self.state_file.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not an object")
            if "files" not in data:
                return self._legacy(data)
            files = data["files"]
            if not isinstance(files, list) or not all(_valid_entry(e) for e in files):
                raise ValueError("files")
            current = data.get("current")
            if current is not None and not isinstance(current, str):
                raise ValueError("current")
            return {"files": files, "current": current}
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            self.notes.append(f"{self.state_file} is damaged: reading the log from the start (requests already "
                              "scored are skipped)")
            return None

    def _legacy(self, data: dict) -> dict | None:
        offset, line = data["offset"], data.get("line")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValueError("offset")
        line = line if isinstance(line, int) and not isinstance(line, bool) else None
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        if st.st_size < offset:
            self.notes.append(f"{self.path} is shorter ({st.st_size} bytes) than the offset kept in "
                              f"{self.state_file} ({offset}): it was truncated; reading it from the start")
            return None
        entry = {"dev": st.st_dev, "ino": st.st_ino, "name": self.path.name, "offset": offset, "line": line,
                 "fp": None, "gen": 0, "static": False}
        return {"files": [entry], "current": f"{st.st_dev}:{st.st_ino}"}


def _valid_entry(e: Any) -> bool:
    def count(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0

    return (isinstance(e, dict) and count(e.get("dev")) and count(e.get("ino")) and count(e.get("offset"))
            and count(e.get("gen")) and isinstance(e.get("name"), str) and isinstance(e.get("fp"), str)
            and isinstance(e.get("static"), bool) and (e.get("line") is None or count(e.get("line"))))
