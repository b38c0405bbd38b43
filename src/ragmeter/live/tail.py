"""Following a log that rotates: every complete line of every file the log has been, once.

A production log is truncated in place (logrotate ``copytruncate``) or renamed and recreated
(``create``, ``mv log log.1``). The tail keeps, per file, its identity (device and inode), the
byte offset read up to, the line number, and a fingerprint of what it read: sha256 of the first
and of the last (up to) 256 bytes before the offset. Each :meth:`LogTail.read`:

- keeps the current file open (unbuffered: a buffered reader serves bytes from before a
  truncation). When its size falls below what was seen, or its first bytes or the bytes before
  the offset no longer match the fingerprint, it was truncated (or rewritten): the rotated copy
  (a sibling such as ``LOG.1`` or ``LOG-20240101`` holding the same bytes) is read from the
  offset to its end, then the file from its start. While less than 256 bytes were seen (a
  fingerprint that proves little), a sibling made since that holds what was seen and that the
  log no longer starts with is taken as that copy too;
- when the path names another file (another device or inode), the old one was renamed: it stays
  open and is read to its end, and on while the writer still appends to it (until it has not
  changed for ``linger`` seconds), and the new file from its start;
- holds a half-written last line until its newline arrives; one left unfinished in a rotated
  file that stopped changing is given once, flagged ``torn`` (it is never completed). A line
  longer than :data:`MAX_LINE` is never held whole: its first bytes are given once, flagged
  ``long``, and the rest of it, up to its newline, is passed over as it comes (``rest`` lines
  with no bytes), so an unterminated 500 MB line costs at most ``MAX_LINE`` in memory. (A
  watcher restarted in the middle of such a line gives the rest as one more malformed line.)

Each byte is read once: the complete lines of a read (up to ``READ_BYTES``) not consumed yet are
kept and given again by the next :meth:`read`, which reads on only when they are used up.

Nothing moves until the reader says what it consumed (:meth:`advance`) and :meth:`save`\\ s: the
state is written atomically (a temporary file, fsync'd, renamed) and keyed by inode, so a
restarted watcher finds a file renamed while it was down (by inode among the log's siblings, or
a copy by its fingerprint) and resumes exactly where it stopped. While lines wait (the reader is
not caught up), a save writes at most once per ``SAVE_INTERVAL_S``: a restart then reads a few
lines again, which the watcher recorded as done (scored requests are skipped, a line quarantined
once), and skips none. What is seen (a truncation, a replacement, a rotated file that cannot be
found) is said in ``notes``, once.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

#: Bytes read per file and read at most (more only to finish one longer line).
READ_BYTES = 8 << 20
#: The longest line held whole; a longer one is cut (its first bytes given, the rest passed over).
MAX_LINE = 16 << 20
#: Bytes at the start and before the offset that identify what was read.
FP_BYTES = 256
#: Seconds a renamed file stays open after its last change (its writer may not have reopened yet).
LINGER_S = 30.0
#: Seconds between two writes of the state while lines wait to be read (every save writes when caught up).
SAVE_INTERVAL_S = 1.0
#: Rotated names that are compressed: never read (their unread tail, if any, is said lost).
_PACKED = (".gz", ".bz2", ".xz", ".zst", ".zip", ".lz4", ".br")
_SIBLINGS = 500  # directory entries looked at, at most, to find a rotated file
_RETIRED = 64  # rotated files read to their end, remembered (never taken again for a copy)
_CLOCK_SLACK_NS = 2_000_000_000  # file times lag the clock by up to a tick: a copy "since" is this lenient


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
    kind: str = ""  # "long": the first bytes of a line over MAX_LINE; "rest": more of it, passed over


@dataclass
class _File:
    dev: int
    ino: int
    name: str  # where it was last seen
    offset: int = 0  # bytes consumed
    line: int | None = 0  # lines consumed (None: unknown, a state from before line numbers)
    seen: int = 0  # bytes looked at (>= offset: a half line is seen, not consumed)
    gen: int = 0  # bumped on each truncation: the same inode holding new bytes is a new file
    static: bool = False  # a copy made by rotation: nothing more is written to it
    handle: BinaryIO | None = field(default=None, repr=False)
    head: bytes = field(default=b"", repr=False)  # the first min(seen, FP_BYTES) bytes, as read
    tail: bytes = field(default=b"", repr=False)  # the min(offset, FP_BYTES) bytes before the offset
    window: tuple[int, bytes] = field(default=(0, b""), repr=False)  # the last bytes read, and from where
    done: bool = False  # its torn tail was given: retire it once consumed
    skipping: bool = False  # inside a line over MAX_LINE: pass over bytes up to its newline
    since: int = field(default_factory=time.time_ns)  # when this file (this generation) was first looked at
    kept: deque[Line] = field(default_factory=deque, repr=False)  # complete lines read, not consumed yet
    capped: bool = False  # the read that gave ``kept`` stopped at its byte bound

    @property
    def key(self) -> str:
        return f"{self.dev}:{self.ino}" + (f"#{self.gen}" if self.gen else "")

    @property
    def fp(self) -> str:
        return _digest(self.head, self.tail)

    def as_dict(self) -> dict[str, Any]:
        return {"dev": self.dev, "ino": self.ino, "name": self.name, "offset": self.offset, "line": self.line,
                "seen": self.seen, "fp": self.fp, "gen": self.gen, "static": self.static, "since": self.since}


def _digest(head: bytes, tail: bytes) -> str:
    return hashlib.sha256(head + b"|" + tail).hexdigest()[:32]


def _marks(f: BinaryIO, offset: int, seen: int) -> tuple[bytes, bytes]:
    """What a file holds now where the fingerprint looks: its first ``min(seen, FP_BYTES)`` bytes
    and the ``min(offset, FP_BYTES)`` bytes before ``offset``."""
    n = min(offset, FP_BYTES)
    return read_at(f, 0, min(seen, FP_BYTES)), read_at(f, offset - n, n)


def read_at(f: BinaryIO, offset: int, n: int) -> bytes:
    """Up to ``n`` bytes at ``offset``, from the file as it is now: an unbuffered read (a buffered
    reader serves bytes it read before a truncation as if they were still there)."""
    out = bytearray()
    while len(out) < n:
        f.seek(offset + len(out))
        chunk = f.read(n - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def fingerprint(f: BinaryIO, offset: int, seen: int) -> str:
    """The fingerprint of a file read up to ``offset`` with ``seen`` bytes looked at."""
    return _digest(*_marks(f, offset, seen))


def _size(f: BinaryIO) -> int:
    return os.fstat(f.fileno()).st_size


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
        self.retired: list[list[int]] = []  # (dev, ino) of rotated files read to their end, the last few
        self._saved: dict | None = None
        self._saved_at = -math.inf  # time.monotonic() of the last write
        self._restore()

    # ---- reading ----
    def read(self, max_bytes: int = READ_BYTES) -> list[Line]:
        """Complete lines not yet consumed, oldest file first; nothing moves until :meth:`advance`."""
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
                start, data = f.window
                f.tail = (f.tail + data[max(f.offset, line.end - FP_BYTES) - start:line.end - start])[-FP_BYTES:]
                f.offset, f.line = line.end, line.number
                f.done = f.done or line.torn
                if line.kind:  # a long line's first bytes start the skip, its newline ends it
                    f.skipping = line.kind == "long" or line.raw != b"\n"
                if f.kept and f.kept[0].start < f.offset:
                    f.kept.popleft()
                return

    def save(self, *, caught_up: bool = True) -> None:
        """Write the state atomically (when it changed), after retiring rotated files read to their end.
        While lines wait (``caught_up`` False), at most once per ``SAVE_INTERVAL_S``."""
        if not caught_up and time.monotonic() - self._saved_at < SAVE_INTERVAL_S:
            return
        now = time.time()
        keep = []
        for f in self.files:
            if f is not self.current and f.handle is not None:
                st = os.fstat(f.handle.fileno())
                if f.offset >= st.st_size and (f.static or f.done or now - st.st_mtime > self.linger):
                    f.handle.close()
                    self.retired = (self.retired + [[f.dev, f.ino]])[-_RETIRED:]
                    continue
            keep.append(f)
        self.files = keep
        cur = self.current
        doc = {"version": 2, "offset": cur.offset if cur else 0, "line": cur.line if cur else 0,
               "files": [f.as_dict() for f in self.files], "current": cur.key if cur else None,
               "retired": self.retired}
        if doc == self._saved:
            return
        tmp = self.state_file.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as out:
            out.write(json.dumps(doc))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.state_file)
        self._saved = doc
        self._saved_at = time.monotonic()

    def close(self) -> None:
        """Save what was consumed, and close the files."""
        if self.files:
            self.save()
        for f in self.files:
            if f.handle is not None:
                f.handle.close()
                f.handle = None

    def _lines(self, f: _File, max_bytes: int) -> list[Line]:
        if f.handle is None:
            return []
        key = f.key
        while f.kept and f.kept[0].start < f.offset:  # consumed through another path (a restored offset)
            f.kept.popleft()
        if f.kept and f.kept[0].start == f.offset and f.kept[0].file == key:  # the lines a read left: no new read
            self.more = self.more or f.capped
            return list(f.kept)
        f.kept.clear()
        data = read_at(f.handle, f.offset, max_bytes)
        while data and b"\n" not in data and len(data) < MAX_LINE:
            more = read_at(f.handle, f.offset + len(data), min(max(max_bytes, len(data)), MAX_LINE - len(data)))
            if not more:
                break
            data += more
        if len(f.head) < FP_BYTES and f.offset <= len(f.head):  # the fingerprint's head, from these bytes
            f.head = (f.head[:f.offset] + data)[:FP_BYTES]
        f.seen = max(f.seen, f.offset + len(data))
        f.window = (f.offset, data)
        if data and (f.skipping or (len(data) >= MAX_LINE and b"\n" not in data)):
            lines = self._long(f, data)
            self.more = self.more or len(data) >= MAX_LINE or lines[0].raw == b"\n"  # more to read at once
            return lines
        end = data.rfind(b"\n")
        out, pos, number, name = [], f.offset, f.line, f.name
        f.capped = False
        if end >= 0:
            for raw in data[:end + 1].split(b"\n")[:-1]:
                number = None if number is None else number + 1
                out.append(Line(key, name, pos, pos + len(raw) + 1, number, raw))
                pos += len(raw) + 1
            f.capped = len(data) >= max_bytes
            self.more = self.more or f.capped
            f.kept.extend(out)
        rest = data[end + 1:]
        if rest and f is not self.current and not self.more and self._given_up(f):
            number = None if number is None else number + 1
            out.append(Line(key, name, pos, pos + len(rest), number, rest, torn=True))
        return out

    def _long(self, f: _File, data: bytes) -> list[Line]:
        """A line over :data:`MAX_LINE` (its first bytes, ``long``), or more of one being passed
        over (``rest``, ending at its newline when it came)."""
        if not f.skipping:  # the line counts once, here
            number = None if f.line is None else f.line + 1
            return [Line(f.key, f.name, f.offset, f.offset + len(data), number, data[:MAX_LINE], kind="long")]
        end = data.find(b"\n")
        if end < 0:
            return [Line(f.key, f.name, f.offset, f.offset + len(data), f.line, b"", kind="rest")]
        return [Line(f.key, f.name, f.offset, f.offset + end + 1, f.line, b"\n", kind="rest")]

    def _given_up(self, f: _File) -> bool:
        """A rotated file whose unfinished last line will not be finished: a copy, or one that has
        not changed for ``linger`` seconds."""
        assert f.handle is not None
        return f.static or time.time() - os.fstat(f.handle.fileno()).st_mtime > self.linger

    # ---- noticing rotation ----
    def _follow(self) -> None:
        cur = self.current
        if cur is not None and cur.handle is not None:
            size = _size(cur.handle)
            if size < cur.seen or fingerprint(cur.handle, cur.offset, cur.seen) != cur.fp:
                self._truncated(cur, size, self._find_copy(cur.offset, cur.line, cur.seen, cur.fp))
            elif cur.seen < FP_BYTES:  # little seen: bytes that match prove little, a new copy tells more
                copy = self._new_copy(cur)
                if copy is not None:
                    self._truncated(cur, size, copy)
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

    def _truncated(self, cur: _File, size: int, copy: _File | None) -> None:
        """``cur`` shrank below what was seen or was rewritten: its copy's unread rest, then its start."""
        where = (f"reading the unread rest from its rotated copy {copy.name}, then" if copy is not None else
                 "no rotated copy holding its unread rest was found next to it; reading")
        self.notes.append(f"{self.path} was truncated ({size} bytes, below the {cur.seen} seen, or rewritten): "
                          f"{where} {self.path.name} from its start")
        if copy is not None:
            copy.skipping = cur.skipping  # the rest of a line too long to hold is passed over there
            self.files.insert(self.files.index(cur), copy)
        cur.kept.clear()
        cur.offset, cur.line, cur.seen, cur.gen, cur.done, cur.skipping = 0, 0, 0, cur.gen + 1, False, False
        cur.head = cur.tail = b""
        cur.since = time.time_ns()

    def _open(self, path: Path, **kw: Any) -> _File | None:
        try:
            handle = open(path, "rb", buffering=0)  # noqa: SIM115 - kept open: a renamed file is read on
        except OSError:
            return None
        st = os.fstat(handle.fileno())
        return _File(st.st_dev, st.st_ino, path.name, handle=handle, **kw)

    def _matches(self, f: _File, offset: int, seen: int, fp: str | None) -> bool:
        """Whether ``f`` (just opened) holds what a file read up to ``offset`` with ``seen`` bytes
        looked at held (``fp``; None: a state without one, taken on trust when long enough);
        if so its marks are taken from it, ready to read on from ``offset``."""
        assert f.handle is not None
        if _size(f.handle) < max(seen, offset):
            return False
        head, tail = _marks(f.handle, offset, seen)
        if fp is not None and _digest(head, tail) != fp:
            return False
        f.head, f.tail, f.offset, f.seen = head, tail, offset, seen
        return True

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

    def _find_copy(self, offset: int, line: int | None, seen: int, fp: str | None) -> _File | None:
        """A sibling, not tracked yet, that holds the bytes a file had (same fingerprint); nothing
        when nothing was seen (there is nothing to recognise it by, and nothing was there)."""
        if not seen or fp is None:
            return None
        tracked = {(f.dev, f.ino) for f in self.files}
        for p in self._siblings():
            found = self._open(p, line=line, static=True)
            if found is None or found.handle is None:
                continue
            if (found.dev, found.ino) not in tracked and self._matches(found, offset, seen, fp):
                return found
            found.handle.close()
        return None

    def _new_copy(self, cur: _File) -> _File | None:
        """For a log of which little was seen: a sibling made since it was first looked at (not one
        read before) that holds what was seen, and that the log no longer starts with (a copy the
        log still extends is a backup, or a copy not truncated yet): the copy of a copytruncate."""
        assert cur.handle is not None
        skip = {(f.dev, f.ino) for f in self.files} | {(d, i) for d, i in self.retired}
        for p in self._siblings():
            try:
                st = os.stat(p)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in skip or not st.st_size or st.st_ctime_ns < cur.since - _CLOCK_SLACK_NS:
                continue
            found = self._open(p, line=cur.line, static=True)
            if found is None or found.handle is None:
                continue
            head = read_at(found.handle, 0, FP_BYTES)
            if read_at(cur.handle, 0, len(head)) != head and self._matches(found, cur.offset, cur.seen, cur.fp):
                return found
            found.handle.close()
        return None

    def _find_inode(self, entry: dict) -> tuple[_File, bool] | None:
        """A stored file among the log's siblings by inode (renamed while no watcher ran), and
        whether it still holds what was read (else it was truncated too: read from its start)."""
        for p in self._siblings():
            try:
                st = os.stat(p)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) != (entry["dev"], entry["ino"]):
                continue
            found = self._open(p, line=entry["line"], gen=entry["gen"], static=entry["static"])
            if found is None:
                continue
            if self._matches(found, entry["offset"], entry["seen"], entry["fp"]):
                return found, True
            found.line, found.gen = 0, entry["gen"] + 1
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
        for e in stored["files"]:
            is_current = f"{e['dev']}:{e['ino']}" + (f"#{e['gen']}" if e["gen"] else "") == stored["current"]
            args = (e["offset"], e["line"], e["seen"], e["fp"])
            if here is not None and (here.dev, here.ino) == (e["dev"], e["ino"]):
                if self._matches(here, e["offset"], e["seen"], e["fp"]):
                    here.line, here.gen, here.since = e["line"], e["gen"], e["since"]
                    self.files.append(here)
                    self.current, here = here, None
                    continue
                copy = self._find_copy(*args)
                self.notes.append(f"{self.path} was truncated or rewritten while no watcher ran: "
                                  + (f"reading the unread rest from {copy.name}, then" if copy else "reading")
                                  + f" {self.path.name} from its start")
                if copy is not None:
                    self.files.append(copy)
                here.gen = e["gen"] + 1
                continue
            moved = self._find_inode(e)
            if moved is not None and not moved[1]:  # renamed, and truncated too: its copy, then its new start
                copy = self._find_copy(*args)
                self.notes.append(f"{self.path} was truncated and rotated while no watcher ran: reading "
                                  + (f"the unread rest from {copy.name}, then " if copy else "")
                                  + f"{moved[0].name} and {self.path.name} from their start")
                self.files += [copy, moved[0]] if copy is not None else [moved[0]]
                continue
            found = moved[0] if moved is not None else self._find_copy(*args)
            if found is not None:
                if is_current:
                    self.notes.append(f"{self.path} was rotated while no watcher ran: reading the rest of "
                                      f"{found.name}, then {self.path.name} from its start")
                self.files.append(found)
            else:
                self.notes.append(f"the file {e['name']} (inode {e['ino']}) that {self.path} was, read up to byte "
                                  f"{e['offset']}, is gone (deleted or compressed): what it held after that "
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
            retired = data.get("retired", [])
            if not isinstance(retired, list) or not all(isinstance(r, list) and len(r) == 2 for r in retired):
                raise ValueError("retired")
            self.retired = [[int(d), int(i)] for d, i in retired][-_RETIRED:]
            for e in files:
                e.setdefault("seen", e["offset"])
                e.setdefault("since", 0)
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
                 "seen": offset, "fp": None, "gen": 0, "static": False, "since": 0}
        return {"files": [entry], "current": f"{st.st_dev}:{st.st_ino}"}


def _valid_entry(e: Any) -> bool:
    def count(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0

    return (isinstance(e, dict) and count(e.get("dev")) and count(e.get("ino")) and count(e.get("offset"))
            and count(e.get("gen")) and isinstance(e.get("name"), str) and isinstance(e.get("fp"), str)
            and isinstance(e.get("static"), bool) and (e.get("line") is None or count(e.get("line")))
            and ("seen" not in e or (count(e["seen"]) and e["seen"] >= e["offset"]))
            and ("since" not in e or count(e["since"])))
