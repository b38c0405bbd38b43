"""Progress on stderr for every stage of a run (label metrics, embeddings, judge calls).

Both classes are a :class:`ragmeter.core.progress.Progress` and a context manager; pass one
as ``evaluate(progress=...)``, or let :func:`progress_factory` pick by mode:

- ``rich``: a live bar (requests done, calls, cached, tokens, ETA), for a terminal;
- ``plain``: for CI logs and pipes, a line every ``interval`` seconds while a stage runs
  and a closing one (nothing for a stage shorter than that), e.g.
  ``ragmeter: verifying claims 40/120 (33%), 38 calls, 2 cached, ETA 24s``; while no item
  finishes (a long judge call) the line comes all the same, with the calls in flight and the
  time elapsed: ``ragmeter: verifying claims 0/120 (0%), 0 calls, 0 cached, 8 judge calls in
  flight, 45s elapsed`` (:mod:`ragmeter.report.heartbeat`);
- ``none``: nothing;
- ``auto``: ``rich`` when stderr is a terminal, else ``plain``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, TextIO

from ragmeter.core.settings import DEFAULTS, PROGRESS_MODES, InvalidSettingError
from ragmeter.report.heartbeat import Heartbeat, elapsed_text, in_flight_text

ProgressFactory = Callable[[Any], AbstractContextManager[Any]]


def _judge_stats(judge: Any) -> str:
    st = getattr(judge, "stats", None)
    if st is None:
        return ""
    return f"{st.calls} calls, {st.cached} cached"


_eta = elapsed_text


class PlainProgress:
    """Progress as plain lines, for logs without a terminal: a stage that runs longer than
    ``interval`` seconds gets a line every ``interval`` seconds and a closing one; a shorter
    stage prints nothing (a label run on a small set stays silent). ``clock`` is injectable."""

    def __init__(self, judge: Any = None, *, stream: TextIO | None = None,
                 interval: float = DEFAULTS.progress_interval, clock: Callable[[], float] = time.monotonic) -> None:
        self.judge, self.stream, self.interval, self.clock = judge, stream, interval, clock
        self.label, self.total, self.done, self.printed = "", 0, 0, False
        self.started = self.last = self._wall_start = 0.0
        self.heart = Heartbeat(interval, self._beat)

    def __enter__(self) -> PlainProgress:  # noqa: PYI034 - a final class in practice
        return self

    def __exit__(self, *exc: object) -> None:
        self.heart.stop()

    def _write(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(f"ragmeter: {text}\n")
        stream.flush()
        self.printed = True
        self.heart.touch()

    def _beat(self) -> None:
        """The stage's line when nothing finished for ``interval`` seconds, with what is in flight."""
        if self.done >= self.total:
            return
        flying = in_flight_text(self.judge)
        elapsed = f"{elapsed_text(time.monotonic() - self._wall_start)} elapsed"
        self._write(", ".join(p for p in (self.line(), flying, elapsed) if p))

    def line(self, now: float | None = None) -> str:
        """``verifying claims 40/120 (33%), 38 calls, 2 cached, ETA 24s`` as of ``now``."""
        parts = [f"{self.label} {self.done}/{self.total} ({100 * self.done // max(1, self.total)}%)"]
        stats = _judge_stats(self.judge)
        if stats:
            parts.append(stats)
        elapsed = (self.clock() if now is None else now) - self.started
        if self.done >= self.total:
            parts.append(f"done in {elapsed:.1f}s")
        elif self.done:
            parts.append(f"ETA {_eta(elapsed / self.done * (self.total - self.done))}")
        return ", ".join(parts)

    def start(self, label: str, total: int) -> None:
        with self.heart.lock:
            self.label, self.total, self.done, self.printed = label, total, 0, False
            self.started = self.last = self.clock()
            self._wall_start = time.monotonic()
        if total > 0 and self.interval > 0:
            self.heart.start()

    def advance(self, index: int) -> None:
        with self.heart.lock:
            self.done += 1
            now = self.clock()
            if now - self.last >= self.interval or (self.done >= self.total and self.printed):
                self.last = now
                self._write(self.line(now))
        if self.done >= self.total:
            self.heart.stop()


class RichProgress:
    """A live bar on stderr: done/total, calls, cached and tokens, ETA."""

    def __init__(self, judge: Any = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.judge = judge
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=False)
        self.task: Any = None
        self.heart = Heartbeat(1.0, self._refresh)  # the calls in flight, while none finishes

    def __enter__(self) -> RichProgress:
        self.progress.start()
        self.heart.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.heart.stop()
        self.progress.stop()

    def _refresh(self) -> None:
        if self.task is not None:
            self.progress.update(self.task, stats=self._stats())

    def _stats(self) -> str:
        st = getattr(self.judge, "stats", None)
        if st is None:
            return ""
        flying = in_flight_text(self.judge)
        return f"{st.calls} calls, {st.cached} cached, {st.input_tokens + st.output_tokens} tokens" + \
            (f", {flying}" if flying else "")

    def start(self, label: str, total: int) -> None:
        self.task = self.progress.add_task(label, total=total, stats=self._stats())

    def advance(self, index: int) -> None:
        if self.task is not None:
            self.progress.update(self.task, advance=1, stats=self._stats())


JudgeProgress = RichProgress  # the name this bar had when it served judged runs only


def progress_factory(mode: str = DEFAULTS.progress, *, stream: TextIO | None = None,
                     interval: float = DEFAULTS.progress_interval) -> ProgressFactory | None:
    """What ``mode`` (``auto``, ``rich``, ``plain`` or ``none``) draws progress with: a
    callable taking the judge (or None) and returning the progress context, or None."""
    if mode not in PROGRESS_MODES:
        raise InvalidSettingError("progress", f"use {', '.join(PROGRESS_MODES)}; got {mode!r}")
    out = stream if stream is not None else sys.stderr
    if mode == "none":
        return None
    if mode == "auto":
        mode = "rich" if out.isatty() else "plain"
    if mode == "rich":
        return RichProgress
    return lambda judge: PlainProgress(judge, stream=stream, interval=interval)
