"""The rotation-aware tail reader (``ragmeter.live.tail``): every complete line of every file the
log has been, once, whatever mix of appends, half lines, copytruncate, rename-and-recreate and
restarts of the reader happens (at most one rotation between two reads, as logrotate does)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ragmeter.live.tail import LogTail


def _drain(tail: LogTail) -> list[bytes]:
    out = []
    for _ in range(2_000):  # bounded: a reader that never reaches the end fails, not hangs
        lines = tail.read(max_bytes=64)  # small reads: the byte bound and its "more" are exercised
        for ln in lines:
            tail.advance(ln)
            if not ln.torn:
                out.append(ln.raw)
        if not tail.more:
            tail.save()  # once per drain: each save is an fsync
            return out
    raise AssertionError(f"the reader never reached the end ({len(out)} lines read)")


def test_lines_written_and_rotated_before_the_first_read_are_read(tmp_path):
    """The reader saw the log empty; lines came and were copied and truncated before it read again:
    what it had seen (nothing) identifies no copy, so the bytes it saw must be tracked, not the offset."""
    log = tmp_path / "a.log"
    log.write_bytes(b"")
    tail = LogTail(log, tmp_path / "state.json", [])
    assert _drain(tail) == []
    log.write_bytes(b"one\n")
    assert _drain(tail) == [b"one"]
    with open(log, "ab") as f:
        f.write(b"two\nthree\nfo")  # a half line seen, not consumed
    assert _drain(tail) == [b"two", b"three"]
    with open(log, "ab") as f:
        f.write(b"ur\nfive\n")
    shutil.copyfile(log, str(log) + ".1")
    log.write_bytes(b"six\n")
    assert _drain(tail) == [b"four", b"five", b"six"]
    tail.close()


def test_a_damaged_state_is_said_and_read_from_the_start(tmp_path):
    log = tmp_path / "a.log"
    log.write_bytes(b"one\n")
    (tmp_path / "state.json").write_text('{"files": [{"dev": "x"}]}')
    notes: list[str] = []
    tail = LogTail(log, tmp_path / "state.json", notes)
    assert _drain(tail) == [b"one"] and "is damaged" in notes[0]
    tail.close()


class LogLife(RuleBasedStateMachine):
    """A log's life, the reader reading now and then; by content, every line once."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="ragmeter-tail-"))
        self.log = self.dir / "app.log"
        self.log.write_bytes(b"")
        self.state = self.dir / "state.json"
        self.tail = LogTail(self.log, self.state, [], linger=3600)
        self.written: list[bytes] = []
        self.read_lines: list[bytes] = []
        self.half: bytes | None = None  # the start of a line written, its end not yet
        self.n = 0
        self.rotated = False  # a rotation since the last read
        self.old: Path | None = None  # the renamed file the app still writes to, until the next read
        self.rotations = 0

    def _line(self, size: int) -> bytes:
        self.n += 1
        return f"line-{self.n}-".encode() + b"x" * size

    @precondition(lambda self: self.half is None)
    @rule(count=st.integers(1, 4), size=st.integers(0, 90))
    def append(self, count, size):
        with open(self.log, "ab") as f:
            for _ in range(count):
                line = self._line(size)
                f.write(line + b"\n")
                self.written.append(line)

    @precondition(lambda self: self.half is None)
    @rule(size=st.integers(0, 90), cut=st.integers(1, 20))
    def start_half_line(self, size, cut):
        line = self._line(size)
        with open(self.log, "ab") as f:
            f.write(line[:cut])
        self.half = line
        self.cut = min(cut, len(line))

    @precondition(lambda self: self.half is not None)
    @rule()
    def finish_half_line(self):
        assert self.half is not None
        with open(self.log, "ab") as f:
            f.write(self.half[self.cut:] + b"\n")
        self.written.append(self.half)
        self.half = None

    @precondition(lambda self: self.old is not None)
    @rule()
    def late_write_to_the_renamed_file(self):
        assert self.old is not None
        line = self._line(5)
        with open(self.old, "ab") as f:
            f.write(line + b"\n")
        self.written.append(line)

    def _shift(self) -> None:
        for i in range(20, 0, -1):
            if Path(f"{self.log}.{i}").exists():
                os.rename(f"{self.log}.{i}", f"{self.log}.{i + 1}")

    @precondition(lambda self: not self.rotated and self.half is None)
    @rule()
    def copytruncate(self):
        self._shift()
        shutil.copyfile(self.log, f"{self.log}.1")
        with open(self.log, "r+b") as f:
            f.truncate(0)
        self.rotated = True
        self.rotations += 1

    @precondition(lambda self: not self.rotated and self.half is None)
    @rule()
    def rename_and_recreate(self):
        self._shift()
        self.old = Path(f"{self.log}.1")
        os.rename(self.log, self.old)
        self.log.write_bytes(b"")
        self.rotated = True
        self.rotations += 1

    @rule()
    def read(self):
        self.read_lines += _drain(self.tail)
        self.rotated = False
        self.old = None

    @rule()
    def restart_the_reader(self):
        self.tail.save()
        self.tail.close()
        self.tail = LogTail(self.log, self.state, [], linger=3600)

    @invariant()
    def nothing_read_twice_or_invented(self):
        assert len(self.read_lines) == len(set(self.read_lines))
        assert set(self.read_lines) <= set(self.written)

    def teardown(self) -> None:
        try:
            if self.half is not None:
                self.finish_half_line()
            self.read()
            assert sorted(self.read_lines) == sorted(self.written), (
                f"lost {sorted(set(self.written) - set(self.read_lines))[:5]} after {self.rotations} rotations")
        finally:
            self.tail.close()
            shutil.rmtree(self.dir, ignore_errors=True)


LogLife.TestCase.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)
test_the_life_of_a_log = LogLife.TestCase


def test_a_line_over_the_bound_is_cut_and_passed_over_as_it_comes(tmp_path, monkeypatch):
    from ragmeter.live import tail as tail_module

    monkeypatch.setattr(tail_module, "MAX_LINE", 100)
    log = tmp_path / "a.log"
    log.write_bytes(b"one\n" + b"x" * 250)  # a line over the bound, its newline not written yet
    tail = LogTail(log, tmp_path / "state.json", [])
    got = []
    for _ in range(20):
        lines = tail.read(max_bytes=64)
        for ln in lines:
            tail.advance(ln)
            got.append((ln.kind, len(ln.raw), ln.number))
        if not tail.more:
            break
    assert got[0] == ("", 3, 1) and got[1] == ("long", 100, 2)
    assert all(kind == "rest" for kind, _, _ in got[2:])
    with open(log, "ab") as f:
        f.write(b"y" * 300 + b"\ntwo\n")
    more = []
    for _ in range(20):
        for ln in tail.read(max_bytes=64):
            tail.advance(ln)
            more.append((ln.kind, ln.raw, ln.number))
        if not tail.more:
            break
    assert [m for m in more if m[0] != "rest"] == [("", b"two", 3)]  # the long line counted once, as line 2
    assert all(len(raw) <= 100 for _, raw, _ in more)
    tail.close()


def test_a_log_truncated_inside_a_long_line_is_read_from_its_start(tmp_path, monkeypatch):
    """The cut of a line over the bound must not pass over the first line of the file that replaces it."""
    from ragmeter.live import tail as tail_module

    monkeypatch.setattr(tail_module, "MAX_LINE", 100)
    log = tmp_path / "a.log"
    log.write_bytes(b"one\n" + b"x" * 250)  # a line over the bound, its newline not written yet
    tail = LogTail(log, tmp_path / "state.json", [])
    assert [ln.kind for ln in _drain_lines(tail)][:2] == ["", "long"]
    log.write_bytes(b"new\n")  # truncated in place and written again
    assert [(ln.kind, ln.raw) for ln in _drain_lines(tail)] == [("", b"new")]
    tail.close()


def _drain_lines(tail: LogTail) -> list:
    got = []
    for _ in range(20):
        for ln in tail.read(max_bytes=64):
            tail.advance(ln)
            got.append(ln)
        if not tail.more:
            break
    return got


def test_each_byte_is_read_once_while_lines_are_consumed_a_few_at_a_time(tmp_path, monkeypatch):
    """A reader that takes 7 lines a poll from reads of 4 KiB: the lines a read gave and the reader
    did not take are given again without reading the file again; only the half line at the end of a
    read is read twice (it is completed by the next read)."""
    from ragmeter.live import tail as tail_module

    log = tmp_path / "a.log"
    lines = [f"line {i} ".encode() + b"x" * (i % 50) for i in range(3_000)]
    log.write_bytes(b"".join(x + b"\n" for x in lines))
    read_bytes: list[int] = []
    real = tail_module.read_at

    def counted(f, offset, n):
        data = real(f, offset, n)
        if n > tail_module.FP_BYTES:  # the lines' reads, not the fingerprint's
            read_bytes.append(len(data))
        return data

    monkeypatch.setattr(tail_module, "read_at", counted)
    tail = LogTail(log, tmp_path / "state.json", [])
    got: list[bytes] = []
    for _ in range(2_000):
        given = tail.read(max_bytes=4096)
        for ln in given[:7]:
            tail.advance(ln)
            got.append(ln.raw)
        tail.save(caught_up=not (len(given) > 7 or tail.more))
        if len(given) <= 7 and not tail.more:
            break
    tail.close()
    assert got == lines
    longest = max(map(len, lines)) + 1
    assert sum(read_bytes) <= log.stat().st_size + len(read_bytes) * longest, (sum(read_bytes), len(read_bytes))
    assert len(read_bytes) <= log.stat().st_size // (4096 - longest) + 2  # a read per 4 KiB, not per poll
    assert LogTail(log, tmp_path / "state.json", []).read() == []  # closing saved where it stopped


def test_the_state_is_written_at_a_bounded_rate_while_lines_wait(tmp_path, monkeypatch):
    """While the reader is not caught up, a save writes at most once per SAVE_INTERVAL_S; a save
    when caught up always writes (here the clock stands still: only the caught-up saves write)."""
    from ragmeter.live import tail as tail_module

    log = tmp_path / "a.log"
    log.write_bytes(b"".join(b"line %d\n" % i for i in range(200)))
    writes: list[int] = []
    real = os.replace

    def replace(src, dst):
        writes.append(1)
        return real(src, dst)

    monkeypatch.setattr(tail_module.os, "replace", replace)
    monkeypatch.setattr(tail_module.time, "monotonic", lambda: 1000.0)
    tail = LogTail(log, tmp_path / "state.json", [])
    for _ in range(50):  # 2 lines a poll, not caught up: one write (the first), then none
        for ln in tail.read()[:2]:
            tail.advance(ln)
        tail.save(caught_up=False)
    assert len(writes) == 1
    tail.save()  # caught up (or told to): written now
    assert len(writes) == 2
    state = LogTail(log, tmp_path / "state.json", [])
    assert state.read()[0].raw == b"line 100"  # what the caught-up save wrote
    monkeypatch.setattr(tail_module.time, "monotonic", lambda: 1000.0 + tail_module.SAVE_INTERVAL_S)
    for ln in tail.read()[:2]:
        tail.advance(ln)
    tail.save(caught_up=False)  # an interval later: written
    assert len(writes) == 3
    assert LogTail(log, tmp_path / "state.json", []).read()[0].raw == b"line 102"
    tail.close()
    state.close()


def test_lines_kept_from_a_read_are_dropped_when_the_log_is_truncated(tmp_path):
    """Lines read but not consumed, then the log copied and truncated (copytruncate) and written
    anew: the copy's lines come (from the copy), then the new ones, never the kept ones again."""
    log = tmp_path / "a.log"
    log.write_bytes(b"one\ntwo\nthree\n")
    tail = LogTail(log, tmp_path / "state.json", [])
    assert [ln.raw for ln in tail.read()] == [b"one", b"two", b"three"]  # kept, none consumed
    shutil.copyfile(log, str(log) + ".1")
    log.write_bytes(b"four\n")
    assert _drain(tail) == [b"one", b"two", b"three", b"four"]
    tail.close()
