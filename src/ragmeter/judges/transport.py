"""HTTP transport for judge backends: adaptive concurrency, back-off, bounded retries.

- At most ``limit`` requests in flight per backend. A 429/503/529 halves the limit and
  pauses every request for Retry-After (or the back-off); each success grows it back by one
  per ``limit`` successes (additive increase, multiplicative decrease).
- 5xx, timeouts and connection errors are retried with exponential back-off and full
  jitter, at most ``max_retries`` times; then the call fails (the item is ``Failed``, the
  run goes on, and a rerun retries it since nothing was stored).
- 401/403/404 raise ``JudgeConfigError`` at once: retrying cannot fix a wrong key, model or
  URL, so the whole run stops with a message naming the setting.

Each retry, throttle and give-up is a ``logging`` record on the ``ragmeter.judges.transport``
logger (WARNING; the give-up is ERROR), naming the backend, the attempt and the wait, never a key.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, Protocol

import httpx

from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.core.settings import DEFAULTS

THROTTLED = {429, 503, 529}
log = logging.getLogger(__name__)


class JudgeConfigError(JudgeUnavailableError):
    """A setting is wrong (key, model, URL): fatal for the whole run."""


class JudgeTransportError(JudgeUnavailableError):
    """The backend could not be reached after the allowed retries (this item only)."""


@dataclass
class RetryPolicy:
    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    timeout: float = DEFAULTS.timeout  # seconds per call

    def backoff(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_delay, self.base_delay * 2 ** attempt))


class LoopCondition:
    """An ``asyncio.Condition`` for the running event loop. Each sync ``Judge.run`` has its own
    loop, and a condition made in one loop cannot be awaited in another."""

    def __init__(self) -> None:
        self._cond: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> tuple[asyncio.Condition, bool]:
        """(the condition, whether it is new for this loop)."""
        loop = asyncio.get_running_loop()
        if self._cond is None or self._loop is not loop:
            self._cond, self._loop = asyncio.Condition(), loop
            return self._cond, True
        return self._cond, False


class Limiter(Protocol):
    """What ``send`` needs of a concurrency limit: a slot per request, and news of each outcome."""

    async def acquire(self) -> None: ...

    async def release(self) -> None: ...

    def on_success(self) -> None: ...

    def on_throttle(self, wait: float) -> None: ...


class AdaptiveLimiter:
    """Concurrency limit that halves on throttling and grows back slowly."""

    def __init__(self, limit: int) -> None:
        self.max_limit = max(1, limit)
        self.limit = self.max_limit
        self.active = 0
        self.successes = 0
        self.paused_until = 0.0
        self.throttled = 0
        self._loop_cond = LoopCondition()

    def _condition(self) -> asyncio.Condition:
        cond, new = self._loop_cond.get()
        if new:
            self.active = 0  # nothing from an earlier run's loop is still in flight
        return cond

    async def acquire(self) -> None:
        cond = self._condition()
        async with cond:
            while self.active >= self.limit:
                await cond.wait()
            self.active += 1
        delay = self.paused_until - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)

    async def release(self) -> None:
        cond = self._condition()
        async with cond:
            self.active -= 1
            cond.notify_all()

    def on_success(self) -> None:
        self.successes += 1
        if self.limit < self.max_limit and self.successes >= self.limit:
            self.limit += 1
            self.successes = 0

    def on_throttle(self, wait: float) -> None:
        self.throttled += 1
        self.limit = max(1, self.limit // 2)
        self.successes = 0
        self.paused_until = max(self.paused_until, time.monotonic() + wait)


def retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


async def send(
    request: Callable[[], Awaitable[httpx.Response]],
    *,
    limiter: Limiter,
    policy: RetryPolicy,
    backend: str,
    stats: dict,
) -> httpx.Response:
    """Send with the limiter, retrying what can be retried. Returns 2xx and 400 responses."""
    last = "no attempt"
    for attempt in range(policy.max_retries + 1):
        await limiter.acquire()
        try:
            stats["requests"] = stats.get("requests", 0) + 1
            response = await asyncio.wait_for(request(), timeout=policy.timeout)
        except (httpx.TimeoutException, asyncio.TimeoutError):
            last = f"timed out after {policy.timeout:g} s"
            response = None
        except httpx.TransportError as exc:
            last = f"connection error ({type(exc).__name__})"
            response = None
        finally:
            await limiter.release()
        if response is None:
            stats["retries"] = stats.get("retries", 0) + (attempt < policy.max_retries)
            delay = policy.backoff(attempt)
            if attempt < policy.max_retries:
                log.warning("%s: %s; retry %d of %d in %.1f s", backend, last, attempt + 1, policy.max_retries, delay)
            await asyncio.sleep(delay)
            continue
        status = response.status_code
        if status < 300 or status == 400:
            limiter.on_success()
            return response
        if status in (401, 403):
            raise JudgeConfigError(f"{backend}: the server refused the credentials (HTTP {status}); "
                                   f"check the API key setting for this backend")
        if status == 404:
            raise JudgeConfigError(f"{backend}: not found (HTTP 404): check the model name and the base URL "
                                   f"(--judge / --judge-base-url)")
        if status in THROTTLED:
            wait = retry_after(response)
            pause = wait if wait is not None else policy.backoff(attempt)
            limiter.on_throttle(pause)
            last = f"throttled (HTTP {status})"
            log.warning("%s: throttled (HTTP %d): pausing %.1f s, at most %s requests in flight now", backend, status,
                        pause, getattr(limiter, "limit", "?"))
        else:
            last = f"HTTP {status}"
        if attempt < policy.max_retries:
            stats["retries"] = stats.get("retries", 0) + 1
            if status not in THROTTLED:
                delay = policy.backoff(attempt)
                log.warning("%s: %s; retry %d of %d in %.1f s", backend, last, attempt + 1, policy.max_retries, delay)
                await asyncio.sleep(delay)
    log.error("%s: gave up after %d attempts: %s", backend, policy.max_retries + 1, last)
    raise JudgeTransportError(f"{backend}: gave up after {policy.max_retries + 1} attempts: {last}")
