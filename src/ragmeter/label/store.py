"""The labels file: every click, one JSON line, appended and fsync'd before it is acknowledged.

Events (``v`` is the format version, ``at`` a UTC time stamp, ``labeler`` a name)::

    {"v": 1, "at": "...", "labeler": "alice", "sample": "q1", "kind": "grade", "chunk": "c7", "grade": 2}
    {"v": 1, ..., "kind": "grade", "chunk": "c7", "grade": null}          # cleared
    {"v": 1, ..., "kind": "unanswerable", "value": true}                # "cannot be answered from these"
    {"v": 1, ..., "kind": "note", "text": "..."}
    {"v": 1, ..., "kind": "final", "chunk": "c7", "grade": 1}           # adjudicated (labeler = adjudicator)

An event may carry ``eid``, an id the page gives each click: an event whose ``eid`` is
already in the file is acknowledged without being written again, so a click re-sent (its
answer lost in a server crash, or kept by the page across a restart and sent after a reload)
is saved once.

The state is the file read in order, the last event winning per (labeler, sample, chunk):
nothing is ever rewritten, so a crash, a killed server or a closed tab loses at most the click
in flight, which the page had not yet been told was saved. A crash in the middle of a write
can leave a torn last line (no newline, the start of an event): readers ignore it, and the
writer cuts it off before its first append. A broken line anywhere else is corruption and an
error naming the line. A refused file is never written: every line is checked before the torn
tail is cut, so a file that is not a labels file (``--labels`` given the dataset or the
corpus) is refused as it is.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.core.errors import InvalidInputError

FORMAT = 1
GRADES = (0, 1, 2, 3)
KINDS = ("grade", "unanswerable", "note", "final")
NAME = re.compile(r"[\w][\w .@+-]{0,63}\Z")  # \Z, not $: "alice\n" is no name
NAME_RULE = "1-64 letters, digits, spaces or . @ + - _ (no newline or control character)"
MAX_NOTE = 4000
MAX_EID = 64
_TORN_START = b'{"v":'  # how every line the writer writes starts: a torn tail is a prefix of an event

try:  # an advisory lock, so two servers on one file never interleave bytes
    import fcntl
except ImportError:  # pragma: no cover - Windows: appends are still single writes
    fcntl = None  # type: ignore[assignment]


@dataclass
class LabelState:
    """What the events say now."""

    grades: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # labeler -> sample -> chunk -> grade
    unanswerable: dict[str, dict[str, bool]] = field(default_factory=dict)  # labeler -> sample -> flag
    notes: dict[str, dict[str, str]] = field(default_factory=dict)  # labeler -> sample -> text
    finals: dict[str, dict[str, tuple[int, str]]] = field(default_factory=dict)  # sample -> chunk -> (grade, by)
    events: int = 0

    @property
    def labelers(self) -> list[str]:
        names = set(self.grades) | set(self.unanswerable) | set(self.notes)
        return sorted(names)

    def apply(self, e: dict) -> None:
        who, sample, kind = e["labeler"], e["sample"], e["kind"]
        if kind == "grade":
            per = self.grades.setdefault(who, {}).setdefault(sample, {})
            if e["grade"] is None:
                per.pop(e["chunk"], None)
            else:
                per[e["chunk"]] = int(e["grade"])
        elif kind == "unanswerable":
            self.unanswerable.setdefault(who, {})[sample] = bool(e["value"])
        elif kind == "note":
            self.notes.setdefault(who, {})[sample] = e["text"]
        elif kind == "final":
            per_final = self.finals.setdefault(sample, {})
            if e["grade"] is None:
                per_final.pop(e["chunk"], None)
            else:
                per_final[e["chunk"]] = (int(e["grade"]), who)
        self.events += 1


def check_event(e: Any) -> dict:
    """Validate one event (from the page or the file); returns it normalised, or raises ValueError
    (TypeError when it is not an object)."""
    if not isinstance(e, dict):
        raise TypeError("an event must be a JSON object")
    kind = e.get("kind")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    who = e.get("labeler")
    if not isinstance(who, str) or not NAME.match(who):
        raise ValueError(f"labeler must be a name of {NAME_RULE}")
    sample = e.get("sample")
    if not isinstance(sample, str) or not sample:
        raise ValueError("sample must be a sample id")
    at = e.get("at")
    out: dict[str, Any] = {"v": FORMAT, "at": at if isinstance(at, str) else _now(), "labeler": who,
                           "sample": sample, "kind": kind}
    eid = e.get("eid")
    if eid is not None:
        if not isinstance(eid, str) or not 0 < len(eid) <= MAX_EID:
            raise ValueError(f"eid must be a string of 1-{MAX_EID} characters")
        out["eid"] = eid
    if kind in ("grade", "final"):
        chunk, grade = e.get("chunk"), e.get("grade")
        if not isinstance(chunk, str) or not chunk:
            raise ValueError("chunk must be a chunk id")
        if grade is not None and (isinstance(grade, bool) or grade not in GRADES):
            raise ValueError("grade must be 0, 1, 2, 3 or null")
        out.update(chunk=chunk, grade=grade)
    elif kind == "unanswerable":
        if not isinstance(e.get("value"), bool):
            raise ValueError("value must be true or false")
        out["value"] = e["value"]
    else:
        text = e.get("text")
        if not isinstance(text, str) or len(text) > MAX_NOTE:
            raise ValueError(f"text must be a string of at most {MAX_NOTE} characters")
        out["text"] = text
    return out


def _now() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def read_events(path: str | Path) -> Iterator[dict]:
    """The file's events in order. A last line without a newline is an event when it is one
    whole; the start of one (a torn write) is skipped; anything else is an error, as a broken
    line anywhere is (naming the line; a first line that is not an event says the file is not a
    labels file)."""
    p = Path(path)
    if not p.exists():
        return
    if not p.is_file():  # a pipe would block the read until some writer came; a folder cannot be read
        raise InvalidInputError("is not a regular file (a folder, a pipe or a device): a labels file is a file",
                                file=str(path), fix="give --labels a file that `ragmeter label` writes (default: "
                                                    "<dataset>.labels.jsonl), or a new file name")
    data = p.read_bytes()
    end = data.rfind(b"\n") + 1
    lines = data[:end].split(b"\n")[:-1]
    tail = data[end:]
    good = 0
    for number, raw in enumerate(lines + ([tail] if tail.strip() else []), start=1):
        if not raw.strip():
            continue
        try:
            event = check_event(json.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, ValueError, TypeError, RecursionError) as exc:
            if number > len(lines) and (raw.startswith(_TORN_START) or _TORN_START.startswith(raw)):
                return  # a torn write: the start of an event, never finished
            raise _not_an_event(path, number, exc, first=not good) from None
        good += 1
        yield event


def _not_an_event(path: str | Path, number: int, exc: BaseException, *, first: bool) -> InvalidInputError:
    why = "JSON nested too deeply" if isinstance(exc, RecursionError) else str(exc)
    fix = ("this is not a labels file (its first line is not a label event): give --labels the file that "
           "`ragmeter label` writes (default: <dataset>.labels.jsonl), or a new file name; nothing was written "
           "to it" if first else "this line is damaged; remove it (every other line is intact)")
    return InvalidInputError(f"not a label event ({why})", file=str(path), line=number, fix=fix)


def load_state(path: str | Path) -> LabelState:
    state = LabelState()
    for e in read_events(path):
        state.apply(e)
    return state


class LabelStore:
    """Appends events to the file and keeps the folded state in memory (thread-safe)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.state = LabelState()
        self.eids: set[str] = set()  # the clicks already saved, by the page's id
        for e in read_events(self.path):  # every line checked first: a refused file is never written
            self.state.apply(e)
            if "eid" in e:
                self.eids.add(e["eid"])
        self.trimmed = self._repair_tail()
        self.lock = threading.RLock()  # held while writing, and by readers of ``state``
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _repair_tail(self) -> int:
        """After :func:`read_events` accepted the file: cut a torn last line off (a crash
        mid-write), or end a whole last event with its newline; returns the bytes removed."""
        if not self.path.exists():
            return 0
        with open(self.path, "r+b") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return 0
            f.seek(max(0, size - 65536))
            tail = f.read()
            if tail.endswith(b"\n"):
                return 0
            cut = tail.rfind(b"\n")
            keep = size - len(tail) + cut + 1 if cut >= 0 else (0 if size <= 65536 else None)
            if keep is None:  # a last line longer than 64 KiB: find its start the slow way
                data = self.path.read_bytes()
                keep = data.rfind(b"\n") + 1
            f.seek(keep)
            last = f.read()
            if _whole_event(last):  # read_events took it as an event: give it its newline
                f.seek(0, os.SEEK_END)
                f.write(b"\n")
                keep = size
            else:
                f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())
            return size - keep

    def append(self, event: dict) -> dict:
        """Validate, write one line, fsync, then update the state; returns the stored event. An
        event whose ``eid`` is already saved is not written again (returned with ``repeat``)."""
        e = check_event({**event, "at": _now()} if isinstance(event, dict) else event)  # the server's clock
        line = (json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        with self.lock:
            if e.get("eid") in self.eids:
                return {**e, "repeat": True}
            if fcntl is not None:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                view = memoryview(line)
                while view:
                    written = os.write(self._fd, view)
                    view = view[written:]
                os.fsync(self._fd)
            finally:
                if fcntl is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
            self.state.apply(e)
            if "eid" in e:
                self.eids.add(e["eid"])
        return e

    def close(self) -> None:
        os.close(self._fd)


def _whole_event(raw: bytes) -> bool:
    try:
        check_event(json.loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, ValueError, TypeError, RecursionError):
        return False
    return True


def graded_chunks(state: LabelState) -> dict[str, list[str]]:
    """Sample -> every chunk any labeler graded or an adjudicator decided."""
    out: dict[str, set[str]] = {}
    for per_sample in state.grades.values():
        for sid, grades in per_sample.items():
            out.setdefault(sid, set()).update(grades)
    for sid, finals in state.finals.items():
        out.setdefault(sid, set()).update(finals)
    return {sid: sorted(c) for sid, c in out.items()}
