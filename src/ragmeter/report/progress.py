"""Progress on stderr for every stage of a run (label metrics, embeddings, judge calls).

Both classes are a :class:`ragmeter.core.progress.Progress` and a context manager; pass one
as ``evaluate(progress=...)``, or let :func:`progress_factory` pick by mode:

- ``rich``: a live bar (requests done, calls, cached, tokens, ETA), for a terminal;
- ``plain``: for CI logs and pipes, a line every ``interval`` seconds while a stage runs
  and a closing one (nothing for a stage shorter than that), e.g.
  ``ragmeter: verifying claims 40/120 (33%), 38 calls, 2 cached, ETA 24s``;
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

ProgressFactory = Callable[[Any], AbstractContextManager[Any]]


def _judge_stats(judge: Any) -> str:
    st = getattr(judge, "stats", None)
    if st is None:
        return ""
    return f"{st.calls} calls, {st.cached} cached"


def _eta(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class PlainProgress:
    """Progress as plain lines, for logs without a terminal: a stage that runs longer than
    ``interval`` seconds gets a line every ``interval`` seconds and a closing one; a shorter
    stage prints nothing (a label run on a small set stays silent). ``clock`` is injectable."""

    def __init__(self, judge: Any = None, *, stream: TextIO | None = None,
                 interval: float = DEFAULTS.progress_interval, clock: Callable[[], float] = time.monotonic) -> None:
        self.judge, self.stream, self.interval, self.clock = judge, stream, interval, clock
        self.label, self.total, self.done, self.printed = "", 0, 0, False
        self.started = self.last = 0.0

    def __enter__(self) -> PlainProgress:  # noqa: PYI034 - a final class in practice
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def _write(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(f"ragmeter: {text}\n")
        stream.flush()
        self.printed = True

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
        self.label, self.total, self.done, self.printed = label, total, 0, False
        self.started = self.last = self.clock()

    def advance(self, index: int) -> None:
        self.done += 1
        now = self.clock()
        if now - self.last >= self.interval or (self.done >= self.total and self.printed):
            self.last = now
            self._write(self.line(now))


class RichProgress:
    """A live bar on stderr: done/total, calls, cached and tokens, ETA."""

    def __init__(self, judge: Any = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self.judge = judge
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[stats]}"), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=False)
        self.task: Any = None

    def __enter__(self) -> RichProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def _stats(self) -> str:
        st = getattr(self.judge, "stats", None)
        if st is None:
            return ""
        return f"{st.calls} calls, {st.cached} cached, {st.input_tokens + st.output_tokens} tokens"

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
