"""Running code ragmeter does not control where it can be abandoned: daemon threads.

A user's function (a ``python:`` record source) may block forever in sync code
(``time.sleep(1e6)``, a socket with no timeout) or raise anything, ``SystemExit`` and
``KeyboardInterrupt`` included. :class:`Abandonable` runs it so that neither can stop the run:

- a sync function runs in a daemon thread of its own; a coroutine function (and an awaitable
  a sync function returns) runs on one event loop in one daemon thread, shared by the calls
  of this runner. The caller awaits the result on its own loop; when that await is cancelled
  (``asyncio.wait_for``'s timeout), the call is abandoned: its result is dropped when it
  ends. A daemon thread never holds the process open at exit, where ``asyncio.to_thread``'s
  executor threads are joined (a function that sleeps forever would hang ``asyncio.run``'s
  shutdown and the interpreter's exit);
- whatever the function raises comes back as :class:`Raised`. In a worker thread a
  ``KeyboardInterrupt`` or ``SystemExit`` is the function's own, never the user's Ctrl-C:
  Python delivers signals to the main thread only, so Ctrl-C still stops the run;
- at most ``max_abandoned`` abandoned calls may still be running; a call beyond is refused
  (:class:`TooManyAbandoned`) rather than starting yet another thread that may never end.

Threads, not subprocesses: a record function usually holds state (a database connection, a
table read at import) that a subprocess would not share, and its arguments and result need
not be picklable. The price: Python cannot kill a thread, so an abandoned call runs on
until it returns or the process exits.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Raised:
    """What the function raised (any BaseException but the caller's own cancellation)."""

    error: BaseException


class TooManyAbandoned(Exception):
    """``max_abandoned`` abandoned calls are still running: no new one is started."""


class Abandonable:
    """Runs functions in daemon threads (see the module docstring); one per source."""

    def __init__(self, *, max_abandoned: int = 16, name: str = "ragmeter-abandonable") -> None:
        self.max_abandoned = max_abandoned
        self.name = name
        self._lock = threading.Lock()
        self._abandoned = 0  # calls given up on that have not ended yet
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def abandoned(self) -> int:
        with self._lock:
            return self._abandoned

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``'s result (awaited when it is awaitable), or :class:`Raised`."""
        with self._lock:
            if self._abandoned >= self.max_abandoned:
                raise TooManyAbandoned(f"{self._abandoned} earlier calls are still running past their time limit")
        if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__):
            return await self._on_loop(_guarded(fn, *args))
        answer = await self._in_thread(fn, *args)
        if inspect.isawaitable(answer):
            return await self._on_loop(_guarded_awaitable(answer))
        return answer

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def deliver(value: Any) -> None:
            if not future.done():
                future.set_result(value)

        def work() -> None:
            try:
                value: Any = fn(*args)
            except BaseException as exc:  # noqa: BLE001  (the function's own: returned, never raised here)
                value = Raised(exc)
            with self._lock:
                state["ended"] = True
                if state["abandoned"]:
                    self._abandoned -= 1
            try:
                loop.call_soon_threadsafe(deliver, value)
            except RuntimeError:  # the caller's loop is closed: nobody waits for this any more
                pass

        state = {"ended": False, "abandoned": False}
        threading.Thread(target=work, name=self.name, daemon=True).start()
        try:
            return await future
        except asyncio.CancelledError:
            with self._lock:
                if not state["ended"]:
                    state["abandoned"] = True
                    self._abandoned += 1
            raise

    def _worker_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=_serve, args=(loop,), name=f"{self.name}-loop", daemon=True).start()
                self._loop = loop
            return self._loop

    async def _on_loop(self, coro: Any) -> Any:
        done = asyncio.run_coroutine_threadsafe(coro, self._worker_loop())
        try:
            return await asyncio.wrap_future(done)
        except asyncio.CancelledError:
            done.cancel()  # reaches the coroutine unless it blocks its loop (then it is abandoned)
            raise

    def close(self) -> None:
        """Stop the shared loop (a loop blocked by a call that never returns is left behind)."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    try:
        loop.run_forever()
    finally:
        loop.close()


async def _guarded(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return await fn(*args)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # noqa: BLE001  (SystemExit would otherwise stop the worker loop)
        return Raised(exc)


async def _guarded_awaitable(awaitable: Any) -> Any:
    try:
        return await awaitable
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # noqa: BLE001
        return Raised(exc)
