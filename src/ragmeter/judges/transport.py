"""HTTP transport for judge backends: adaptive concurrency, back-off, bounded retries, and a
connection pool that cannot wedge.

- At most ``limit`` requests in flight per backend. A 429/503/529 halves the limit and
  pauses every request for Retry-After (or the back-off); each success grows it back by one
  per ``limit`` successes (additive increase, multiplicative decrease). The throttles of one
  burst (within ``AdaptiveLimiter.WINDOW`` seconds of a halving, or of its pause) halve the
  limit once, as TCP halves once per window: 32 requests in flight that all meet a 429 leave
  16 slots, not 1.
- Every wait is one httpx enforces itself (:func:`client_for`): connecting, writing the
  request, waiting for a pooled connection and each read of the reply are each bounded by
  ``RetryPolicy.timeout``, and the whole body by one more ``timeout`` after its headers
  (:func:`post`). Nothing cancels a request from outside (``asyncio.wait_for`` around an httpx
  call can leave its pooled connection checked out: encode/httpcore#830, #1093, and a pool
  that fills that way stops sending). The pool holds as many connections as the concurrency
  limit, a reply that fails part-way closes its connection, and a reply larger than
  ``MAX_REPLY_BYTES`` fails its item.
- Which failures are retried depends on whether the server may have done the work (and billed
  it). A request that never left (no connection, no pooled connection, the request not written
  whole) or that got an answer that bills nothing (5xx, 429) is retried with exponential
  back-off and full jitter, at most ``max_retries`` times. A request that was sent and got no
  whole reply (no reply within ``timeout``, the connection reset or closed before the reply
  ended) may still be answered, and billed: it is sent again at most ``max_timeout_retries``
  times (1). Then the call fails (the item is ``Failed``, the run goes on, and a rerun retries
  it since nothing was stored), with a message that says which of the two it was.
- 401/403/404 raise ``JudgeConfigError`` at once: retrying cannot fix a wrong key, model or
  URL, so the whole run stops with a message naming the setting.
- A Retry-After (seconds or an HTTP date, RFC 9110 section 10.2.3) is capped at
  ``RetryPolicy.max_wait``, also when the limiter pauses every request for it.

Each retry, throttle and give-up is a ``logging`` record on the ``ragmeter.judges.transport``
logger (WARNING; the give-up is ERROR), naming the backend, the attempt and the wait (and the
wait the server asked for, when it was capped), never a key.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import httpx

from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.core.settings import DEFAULTS

THROTTLED = {429, 503, 529}
log = logging.getLogger(__name__)


class JudgeConfigError(JudgeUnavailableError):
    """A setting is wrong (key, model, URL): fatal for the whole run."""


class JudgeTransportError(JudgeUnavailableError):
    """The backend could not be reached after the allowed retries (this item only)."""


class RequestTooLong(JudgeTransportError):
    """A request the judge cannot take (a prompt past its context window): this item fails and
    nothing is stored; it is counted as too long, not as unreachable (asking again will not help)."""


class JudgeReplyError(JudgeTransportError):
    """The server answered, but not with a reply of its protocol (an HTML page with status 200,
    an envelope of the wrong shape): this item fails, nothing is stored, a rerun asks again."""


@dataclass
class RetryPolicy:
    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    timeout: float = DEFAULTS.timeout  # seconds per call
    max_wait: float = 120.0  # the longest a server's Retry-After may pause the run, per throttle
    max_timeout_retries: int = 1  # resends of a request sent without a whole reply (it may be billed)

    def backoff(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_delay, self.base_delay * 2 ** attempt))

    def capped(self, wait: float) -> float:
        """``wait`` bounded by ``max_wait`` (a NaN or negative wait is no wait)."""
        return min(self.max_wait, wait) if wait > 0 else 0.0


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
    """Concurrency limit that halves on throttling (once per burst) and grows back slowly."""

    WINDOW = 1.0  # seconds after a halving (and its pause) in which another throttle does not halve again

    def __init__(self, limit: int) -> None:
        self.max_limit = max(1, limit)
        self.limit = self.max_limit
        self.active = 0
        self.successes = 0
        self.paused_until = 0.0
        self.throttled = 0
        self.halved_until = 0.0  # another throttle before this is of the same burst
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
            # wake as many waiters as there are free slots, first come first served: waking all of
            # them (notify_all) made every release cost one wake-up per queued request, quadratic
            # in a run's requests (20,000 samples spent most of their CPU there)
            cond.notify(max(1, self.limit - self.active))

    def on_success(self) -> None:
        self.successes += 1
        if self.limit < self.max_limit and self.successes >= self.limit:
            self.limit += 1
            self.successes = 0

    def on_throttle(self, wait: float) -> None:
        self.throttled += 1
        now = time.monotonic()
        if now >= self.halved_until:
            self.limit = max(1, self.limit // 2)
            self.halved_until = now + wait + self.WINDOW
        self.successes = 0
        self.paused_until = max(self.paused_until, now + wait)


def retry_after(response: httpx.Response, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds or an HTTP date
    (``Wed, 21 Oct 2015 07:28:00 GMT``); None when absent or unreadable. Not capped here.

    >>> retry_after(httpx.Response(429, headers={"retry-after": "7"}))
    7.0
    >>> retry_after(httpx.Response(429, headers={"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}),
    ...             now=datetime(2015, 10, 21, 7, 28, tzinfo=timezone.utc))
    30.0
    """
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - (now or datetime.now(timezone.utc))).total_seconds()
    if math.isnan(seconds):
        return None
    return max(0.0, seconds)


def throttle_wait(response: httpx.Response, policy: RetryPolicy, attempt: int) -> tuple[float, str]:
    """How long a throttled request pauses: the server's Retry-After capped at the policy's
    ``max_wait``, else the back-off; and a note when the server asked for longer."""
    asked = retry_after(response)
    wait = policy.capped(asked) if asked is not None else policy.backoff(attempt)
    capped = asked is not None and asked > wait
    return wait, f" (the server asked for {asked:g} s, capped by the retry policy)" if capped else ""


MAX_REPLY_BYTES = 64 * 2 ** 20  # a judge's reply is kilobytes; past this it is refused, not held
#: httpx exceptions of a request that never left whole: the server did no work and billed nothing
NOT_SENT = (httpx.PoolTimeout, httpx.ConnectTimeout, httpx.ConnectError, httpx.WriteTimeout, httpx.WriteError,
            httpx.UnsupportedProtocol, httpx.ProxyError)


def client_for(policy: RetryPolicy, connections: int, **options: Any) -> httpx.AsyncClient:
    """An httpx client whose every wait is bounded by ``policy.timeout`` (connect, write, each read,
    and waiting for a pooled connection) and whose pool holds ``connections`` connections: as
    many as requests may be in flight, so a request never waits for another's connection."""
    n = max(1, connections)
    return httpx.AsyncClient(timeout=httpx.Timeout(policy.timeout),
                             limits=httpx.Limits(max_connections=n, max_keepalive_connections=n, keepalive_expiry=5.0),
                             **options)


def endpoint(base_url: str, path: str) -> str:
    """``path`` appended to the base URL's path, its query kept at the end.

    >>> endpoint("https://h.example/openai/v1?api-version=2024-06-01", "/chat/completions")
    'https://h.example/openai/v1/chat/completions?api-version=2024-06-01'
    >>> endpoint("http://127.0.0.1:8000/v1/", "/chat/completions")
    'http://127.0.0.1:8000/v1/chat/completions'
    """
    base, sep, query = base_url.partition("?")
    fragment = ""
    if "#" in query:
        query, _, fragment = query.partition("#")
    base = base.split("#", 1)[0].rstrip("/")
    return f"{base}{path}{sep}{query}" + (f"#{fragment}" if fragment else "")


async def post(client: httpx.AsyncClient, url: str, *, payload: Any, headers: dict, timeout: float,
               max_bytes: int | None = None) -> httpx.Response:
    """POST ``payload`` as JSON and read the whole reply: its headers within the client's timeouts,
    its body within ``timeout`` more seconds and ``max_bytes``. The response is always closed
    here, so a reply broken part-way closes its connection instead of leaving it in the pool.

    Raises the httpx exception of what failed (``httpx.ReadTimeout`` for a body that did not
    arrive whole in time) and ``JudgeReplyError`` for a body over ``max_bytes`` (default
    :data:`MAX_REPLY_BYTES`)."""
    max_bytes = MAX_REPLY_BYTES if max_bytes is None else max_bytes
    request = client.build_request("POST", url, json=payload, headers=headers)
    response = await client.send(request, stream=True)
    try:
        deadline = time.monotonic() + timeout
        chunks, size = [], 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise JudgeReplyError(f"the server's reply is larger than {max_bytes // 2 ** 20} MB; nothing was "
                                      f"stored, a rerun asks again")
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout(f"the reply did not arrive whole within {timeout:g} s of its headers",
                                        request=request)
    finally:
        await response.aclose()
    kept = [(k, v) for k, v in response.headers.multi_items()
            if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
    return httpx.Response(response.status_code, headers=kept, content=b"".join(chunks), request=request)


def _failure(exc: Exception, policy: RetryPolicy) -> tuple[str, str]:
    """(what happened, and "" for a request that never left whole, else how it was sent: the
    server may have done the work) for a request that raised."""
    name = type(exc).__name__
    if isinstance(exc, httpx.PoolTimeout):
        return f"timed out after {policy.timeout:g} s waiting for a connection ({NEVER_SENT})", ""
    if isinstance(exc, httpx.ConnectTimeout):
        return f"timed out after {policy.timeout:g} s connecting ({NEVER_SENT})", ""
    if isinstance(exc, NOT_SENT):
        return f"could not send the request ({name}; {NEVER_SENT})", ""
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out after {policy.timeout:g} s", "waiting for the reply to a request it sent"
    return f"the connection broke before the whole reply came ({name})", "after the request was sent"


NEVER_SENT = "never sent: nothing was billed"


async def send(
    request: Callable[[], Awaitable[httpx.Response]],
    *,
    limiter: Limiter,
    policy: RetryPolicy,
    backend: str,
    stats: dict,
    timing: dict[str, float] | None = None,
) -> httpx.Response:
    """Send with the limiter, retrying what can be retried. Returns 2xx and 400 responses.
    ``request`` must bound its own waits (:func:`post` over a :func:`client_for` client does):
    nothing here cancels it. ``timing`` (if given) adds up this call's seconds on the wire
    (``wire_s``: from each attempt's start, once it holds a concurrency slot, to its response)
    and waiting for a slot or a throttling pause to end (``queue_s``). ``stats["in_flight"]``
    counts the requests holding a slot now."""
    last = what = "no attempt"
    sent_how = ""
    unanswered = 0  # attempts sent that got no whole reply: the server may have done them
    for attempt in range(policy.max_retries + 1):
        asked = time.perf_counter()
        await limiter.acquire()
        sent = time.perf_counter()
        stats["in_flight"] = stats.get("in_flight", 0) + 1
        try:
            stats["requests"] = stats.get("requests", 0) + 1
            response = await request()
        except httpx.TransportError as exc:  # every httpx failure of the exchange (timeouts included)
            what, sent_how = _failure(exc, policy)
            last = f"{what} ({sent_how})" if sent_how else what
            response = None
            if sent_how:  # the server may have done the work
                unanswered += 1
                stats["timeouts"] = stats.get("timeouts", 0) + 1
        finally:
            stats["in_flight"] -= 1
            if timing is not None:
                timing["queue_s"] = timing.get("queue_s", 0.0) + (sent - asked)
                timing["wire_s"] = timing.get("wire_s", 0.0) + (time.perf_counter() - sent)
            await limiter.release()
        if response is None and unanswered > policy.max_timeout_retries:
            log.error("%s: gave up: %s, %d times (a request the server may still answer is not sent again)",
                      backend, what, unanswered)
            raise JudgeTransportError(f"{backend}: gave up: {what}, {unanswered} times ({sent_how}); the server "
                                      f"may still answer it, and bill, so it is not sent again in this run (a "
                                      f"rerun asks again)")
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
            pause, said = throttle_wait(response, policy, attempt)
            limiter.on_throttle(pause)
            last = f"throttled (HTTP {status})"
            log.warning("%s: throttled (HTTP %d): pausing requests for %.1f s%s, at most %s requests in flight now",
                        backend, status, pause, said, getattr(limiter, "limit", "?"))
        else:
            last = f"HTTP {status}"
        if attempt < policy.max_retries:
            stats["retries"] = stats.get("retries", 0) + 1
            if status not in THROTTLED:
                delay = policy.backoff(attempt)
                log.warning("%s: %s; retry %d of %d in %.1f s", backend, last, attempt + 1, policy.max_retries, delay)
                await asyncio.sleep(delay)
    billed = ("" if NEVER_SENT in last else "; nothing was billed" if unanswered == 0 else
              "; one attempt was sent without a whole reply and may have been billed")
    log.error("%s: gave up after %d attempts: %s", backend, policy.max_retries + 1, last)
    raise JudgeTransportError(f"{backend}: gave up after {policy.max_retries + 1} attempts: {last}{billed}; "
                              f"a rerun asks again")
