"""A line every few seconds while judge calls are in flight, so that a long call is never a
silence (README: a progress line every ``--progress-interval`` seconds while a stage runs).

:class:`Heartbeat` is the clock: a daemon thread that wakes every ``interval`` seconds and calls
``beat()`` unless something else printed in the meantime (``touch()``). :func:`judge_heartbeat`
wraps a block that makes judge calls outside a progress bar (``testset generate``, ``watch``):
while calls are in flight it prints ``ragmeter: generating questions: 2 judge calls in flight,
1m05s elapsed`` (and the tokens generated so far, for a backend that reports them as it goes:
:meth:`ragmeter.judges.Backend.tokens_generated`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ragmeter.core.settings import DEFAULTS


def elapsed_text(seconds: float) -> str:
    """``65.2`` -> ``'1m05s'``; under a minute, whole seconds (``'12s'``)."""
    seconds = max(0, round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def in_flight_text(judge: Any) -> str:
    """``'2 judge calls in flight, 310 tokens generated so far'``, or ``''`` when none is in flight."""
    st = getattr(judge, "stats", None)
    n = getattr(st, "sending", getattr(st, "in_flight", 0))  # on the wire: never more than the concurrency
    if not n:
        return ""
    text = f"{n} judge call{'s' if n != 1 else ''} in flight"
    tokens = getattr(st, "generated_tokens", 0)
    return f"{text}, {tokens} tokens generated so far" if tokens else text


class Heartbeat:
    """Calls ``beat()`` from a daemon thread every ``interval`` seconds of silence, between
    :meth:`start` and :meth:`stop`; :meth:`touch` says a line was just printed."""

    def __init__(self, interval: float, beat: Callable[[], None]) -> None:
        self.interval, self.beat = interval, beat
        self.lock = threading.Lock()  # held while a line is written, by either side
        self._last = time.monotonic()
        self._stop: threading.Event | None = None

    def touch(self) -> None:
        self._last = time.monotonic()

    def start(self) -> None:
        self.stop()
        self.touch()
        stop = self._stop = threading.Event()
        threading.Thread(target=self._run, args=(stop,), name="ragmeter-heartbeat", daemon=True).start()

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
            self._stop = None

    def _run(self, stop: threading.Event) -> None:
        while not stop.wait(min(self.interval, max(0.05, self.interval - (time.monotonic() - self._last)))):
            if time.monotonic() - self._last >= self.interval:
                with self.lock:
                    if stop.is_set():
                        return
                    self.beat()
                    self.touch()


@contextmanager
def judge_heartbeat(judge: Any, label: str, *, write: Callable[[str], None] | None = None,
                    interval: float = DEFAULTS.progress_interval) -> Iterator[None]:
    """While the block runs, a line every ``interval`` seconds in which judge calls are in flight."""
    started = time.monotonic()
    out = write or (lambda text: (sys.stderr.write(text + "\n"), sys.stderr.flush()))

    def beat() -> None:
        flying = in_flight_text(judge)
        if flying:
            out(f"ragmeter: {label}: {flying}, {elapsed_text(time.monotonic() - started)} elapsed")

    if judge is None or interval <= 0:
        yield
        return
    heart = Heartbeat(interval, beat)
    heart.start()
    try:
        yield
    finally:
        heart.stop()
