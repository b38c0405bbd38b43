"""Bounded, cached, never-raising lookups over any record source.

``RecordLookup(source, cache=..., timeout_s=10)`` is what the rest of ragmeter calls:

1. the cache is asked first (key: source identity, entity, attribute);
2. otherwise the source is asked, under a concurrency limit and a time limit; a lookup past
   the limit is ``CannotVerify(kind="timeout")``, anything the source raises is
   ``CannotVerify(kind="error")`` naming the exception type (never a traceback, never a crash);
3. a value that is NaN or infinite (:mod:`ragmeter.core.finite`) is cannot-verify, like an
   error; a final outcome (a value, or "no such record") is stored; a failure is not.

One async core; :meth:`RecordLookup.run` is the thin sync wrapper (one event loop for the
batch, the source closed at the end).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ragmeter.core.aio import run_sync
from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.finite import NOT_FINITE, non_finite
from ragmeter.records.cache import LookupCache, lookup_key
from ragmeter.records.types import (
    CannotVerify,
    LookupOutcome,
    RecordSource,
    RecordValue,
)


@dataclass
class LookupStats:
    asked: int = 0  # sent to the source
    cached: int = 0  # answered from the cache
    values: int = 0
    no_record: int = 0
    failed: int = 0  # timeouts, errors and refusals
    reasons: dict[str, int] = field(default_factory=dict)  # failure kind -> count

    def as_dict(self) -> dict[str, object]:
        return {"asked": self.asked, "cached": self.cached, "values": self.values, "no_record": self.no_record,
                "failed": self.failed, "reasons": dict(self.reasons)}


class RecordLookup:
    """A record source with a cache, a time limit per lookup and a concurrency limit."""

    def __init__(self, source: RecordSource, *, cache: LookupCache | None = None, timeout_s: float = 10.0,
                 concurrency: int = 8) -> None:
        if timeout_s <= 0 or concurrency < 1:
            raise InvalidParameterError("timeout_s must be > 0 and concurrency >= 1")
        self.source = source
        self.cache = cache
        self.timeout_s = timeout_s
        self.concurrency = concurrency
        self.stats = LookupStats()
        self._limit: asyncio.Semaphore | None = None
        self._limit_loop: asyncio.AbstractEventLoop | None = None

    @property
    def identity(self) -> str:
        return self.source.identity

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._limit is None or self._limit_loop is not loop:
            self._limit, self._limit_loop = asyncio.Semaphore(self.concurrency), loop
        return self._limit

    async def lookup(self, entity: str, attribute: str) -> LookupOutcome:
        if not isinstance(entity, str) or not entity.strip():
            return self._count(CannotVerify("the fact names no entity to look up", "error"))
        if not isinstance(attribute, str) or not attribute.strip():
            return self._count(CannotVerify("the fact names no attribute to look up", "error"))
        entity, attribute = entity.strip(), attribute.strip()
        key = lookup_key(self.source.identity, entity, attribute)
        if self.cache is not None:
            stored = self.cache.get(key)
            if stored is not None:
                self.stats.cached += 1
                return self._count(self._finite(stored.outcome, entity, attribute))  # one an older run stored
        self.stats.asked += 1
        async with self._semaphore():
            try:
                outcome = await asyncio.wait_for(self.source.lookup(entity, attribute), self.timeout_s)
            except asyncio.TimeoutError:
                outcome = CannotVerify(f"{self.source.identity}: no answer for ({entity!r}, {attribute!r}) within "
                                       f"{self.timeout_s:g} s", "timeout")
            except Exception as exc:  # noqa: BLE001  (a failed lookup is one unverifiable fact, not a crash)
                outcome = CannotVerify(f"{self.source.identity}: the lookup of ({entity!r}, {attribute!r}) raised "
                                       f"{type(exc).__name__}", "error")
        if not isinstance(outcome, (RecordValue, CannotVerify)):
            outcome = CannotVerify(f"{self.source.identity}: the source returned {type(outcome).__name__}, not a "
                                   f"RecordValue or CannotVerify", "error")
        outcome = self._finite(outcome, entity, attribute)
        if self.cache is not None:
            self.cache.put(key=key, source=self.source.identity, entity=entity, attribute=attribute, outcome=outcome)
        return self._count(outcome)

    def _finite(self, outcome: LookupOutcome, entity: str, attribute: str) -> LookupOutcome:
        """A NaN or infinite value is cannot-verify (core.finite): never compared, never cached."""
        if isinstance(outcome, RecordValue) and non_finite(outcome.value):
            return CannotVerify(f"{self.source.identity}: {attribute!r} of {entity!r} is {outcome.value!r}, "
                                f"{NOT_FINITE}", "error")
        return outcome

    def _count(self, outcome: LookupOutcome) -> LookupOutcome:
        if isinstance(outcome, RecordValue):
            self.stats.values += 1
        elif outcome.final:
            self.stats.no_record += 1
        else:
            self.stats.failed += 1
            self.stats.reasons[outcome.kind] = self.stats.reasons.get(outcome.kind, 0) + 1
        return outcome

    async def prepare(self) -> None:
        """Start a source that needs starting (an MCP server) outside any lookup's time limit;
        a source that cannot start answers each lookup with the reason."""
        start = getattr(self.source, "start", None)
        if start is not None:
            with contextlib.suppress(Exception):  # a source that cannot start says why in each lookup
                await start()

    async def lookup_many(self, pairs: Iterable[tuple[str, str]]) -> list[LookupOutcome]:
        await self.prepare()
        return list(await asyncio.gather(*(self.lookup(e, a) for e, a in pairs)))

    async def aclose(self) -> None:
        await self.source.aclose()

    def run(self, pairs: Sequence[tuple[str, str]]) -> list[LookupOutcome]:
        """The sync wrapper: look every pair up in one event loop, then close the source."""

        async def main() -> list[LookupOutcome]:
            try:
                return await self.lookup_many(pairs)
            finally:
                await self.aclose()

        return run_sync(main)
