"""A judge call's latency is its time on the wire; the wait for a concurrency slot is apart
(judges/transport.py, the backends' replies and the judge summary)."""

from __future__ import annotations

import asyncio
import time

import httpx

from ragmeter.judges.backends import Reply
from ragmeter.judges.judge import JudgeStats, Judgment, _Tally
from ragmeter.judges.transport import AdaptiveLimiter, RetryPolicy, send

CALL = 0.05  # each request's time on the wire (a sleep: never shorter)


def test_calls_queued_for_one_slot_are_timed_from_their_start_on_the_wire() -> None:
    async def main() -> tuple[list[dict[str, float]], float]:
        limiter = AdaptiveLimiter(1)  # one slot: four calls wait their turn
        timings: list[dict[str, float]] = [{} for _ in range(4)]

        async def request() -> httpx.Response:
            await asyncio.sleep(CALL)
            return httpx.Response(200)

        start = time.perf_counter()
        await asyncio.gather(*(send(request, limiter=limiter, policy=RetryPolicy(), backend="t", stats={},
                                    timing=t) for t in timings))
        return timings, time.perf_counter() - start

    timings, wall = asyncio.run(main())
    wire = [t["wire_s"] for t in timings]
    queue = sorted(t["queue_s"] for t in timings)
    assert all(w >= CALL for w in wire)
    assert sum(wire) <= wall  # one at a time on the wire: their wire times fit in the run
    assert queue[0] < CALL and all(q >= k * CALL * 0.99 for k, q in enumerate(queue))  # the k-th waits k calls
    assert sum(wire) + sum(queue) > wall  # what latency_s summed before: the waits counted as latency


def test_the_summary_keeps_the_wait_apart() -> None:
    tally = _Tally()
    tally.add(Reply("{}", 10, 2, 0.5, queue_s=3.0))
    tally.add(Reply("{}", 10, 2, 0.25, queue_s=1.0))
    stats = JudgeStats()
    stats.add("p", Judgment("k", True, {}, None, "{}", tally.calls, 1, 20, 4, cached=False, latency_s=tally.latency,
                            queue_s=tally.queue))
    assert stats.as_dict()["latency_s"] == 0.75 and stats.as_dict()["queue_s"] == 4.0
