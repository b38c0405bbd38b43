"""The Ray engine: the same plan, sharded over a Ray cluster, with the same numbers.

- Samples are split into shards, each scored by a Ray task with the local engine
  (label metrics vectorized per shard, judged metrics through the shared claim matrix).
- Judge calls from every worker go through one limiter actor that holds the backend's
  concurrency and its back-off, so adding workers never multiplies the load on the judge
  (a 429 seen by one worker pauses all of them).
- Each shard writes its judgments to its own ledger file (``ledger-shard-<i>.sqlite`` next
  to the run's ledger) and reads the run's ledger too (``LayeredLedger``); the shards are
  merged into the run's ledger at the end (``Ledger.merge_from``, ``INSERT OR IGNORE``). A task
  whose worker dies is retried by Ray and finds the judgments its first attempt stored: nothing
  is lost or asked twice.
- The sources (judge, embedder, record lookup, criteria) travel as their description
  (:class:`~ragmeter.evidence.sources.SourcesDescription`) and are built in each worker,
  where a client is opened or an MCP server started. Record lookups are cached straight in the run's ledger file, in its
  ``record_lookups`` table (SQLite WAL, ``INSERT OR IGNORE``: concurrent workers cannot clash
  and a lookup is never stored twice), so there is no per-shard lookup table to merge.
- Outcomes are put back in sample order and aggregated exactly as locally (``math.fsum``
  means, seeded bootstrap on sorted values), so per-sample results and means are identical.

Ray is an extra: ``pip install 'ragmeter[ray]'``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragmeter.core.errors import RagmeterError
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.measure import Measure
from ragmeter.core.privacy import telemetry_off
from ragmeter.core.results import Outcome
from ragmeter.core.sample import Sample
from ragmeter.core.settings import DEFAULTS
from ragmeter.engine.evaluate import evaluate_with, measure_list, resolve_measures
from ragmeter.evidence.sources import SourcesDescription
from ragmeter.io.dataset import Dataset, from_samples
from ragmeter.ledger import LayeredLedger, Ledger


def _ray():
    telemetry_off("ray")  # usage stats: on by default for a cluster ray.init starts
    try:
        import ray
    except ImportError:
        raise RagmeterError("--engine ray needs Ray: pip install 'ragmeter[ray]' (or use the default local engine)") \
            from None
    return ray


class RemoteLimiter:
    """The transport's limiter interface, backed by the cluster-wide limiter actor. Slots are
    leases: one held by a worker that died is taken back once it is older than ``lease_s``."""

    def __init__(self, actor) -> None:
        self.actor = actor
        self.throttled = 0
        self._tokens: list = []

    async def acquire(self) -> None:
        token, wait = await self.actor.acquire.remote()
        self._tokens.append(token)
        while wait > 0:  # the slot is granted after any cluster-wide pause
            await asyncio.sleep(wait)
            wait = await self.actor.pause_left.remote()

    async def release(self) -> None:
        await self.actor.release.remote(self._tokens.pop(0) if self._tokens else None)

    def on_success(self) -> None:
        self.actor.on_success.remote()

    def on_throttle(self, wait: float) -> None:
        self.throttled += 1
        self.actor.on_throttle.remote(wait)


class JudgeLimiter:
    """One concurrency limit and back-off for the whole cluster (AIMD, as the local one), run
    as a Ray actor (:func:`_limiter_actor`)."""

    def __init__(self, limit: int, lease_s: float) -> None:
        self.max_limit = self.limit = max(1, limit)
        self.lease_s = lease_s
        self.leases: dict[int, float] = {}
        self.next_token = 0
        self.successes = 0
        self.paused_until = 0.0
        self.peak = 0
        self._cond: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:  # made in the actor's own event loop, on first use
            self._cond = asyncio.Condition()
        return self._cond

    def _reclaim(self) -> None:
        now = time.monotonic()
        for token, since in list(self.leases.items()):
            if now - since > self.lease_s:  # its worker died or hung past the call timeout
                del self.leases[token]

    async def acquire(self) -> tuple[int, float]:
        cond = self._condition()
        async with cond:
            while len(self.leases) >= self.limit:
                self._reclaim()
                if len(self.leases) < self.limit:
                    break
                try:
                    await asyncio.wait_for(cond.wait(), timeout=1.0)
                except asyncio.TimeoutError:
                    pass
            self.next_token += 1
            self.leases[self.next_token] = time.monotonic()
            self.peak = max(self.peak, len(self.leases))
        return self.next_token, max(0.0, self.paused_until - time.monotonic())

    def pause_left(self) -> float:
        return max(0.0, self.paused_until - time.monotonic())

    async def release(self, token: int | None) -> None:
        cond = self._condition()
        async with cond:
            if token is not None:
                self.leases.pop(token, None)
            cond.notify_all()

    def on_success(self) -> None:
        self.successes += 1
        if self.limit < self.max_limit and self.successes >= self.limit:
            self.limit, self.successes = self.limit + 1, 0

    def on_throttle(self, wait: float) -> None:
        self.limit, self.successes = max(1, self.limit // 2), 0
        self.paused_until = max(self.paused_until, time.monotonic() + wait)

    def stats(self) -> dict:
        return {"limit": self.limit, "peak": self.peak, "active": len(self.leases)}


def _limiter_actor(ray: Any) -> Any:
    """``JudgeLimiter`` as a Ray actor class (one CPU-free actor per run)."""
    return ray.remote(num_cpus=0)(JudgeLimiter)


def _score_shard(samples: list[Sample], names: list[str], options: dict[str, Any],
                 sources: SourcesDescription, limiter: Any, ledger_path: str | None, main_ledger: str | None,
                 fingerprints: tuple[str, str], heartbeat: str | None
                 ) -> tuple[dict[str, Sequence[Outcome]], tuple[Any, ...] | None, dict[str, Any] | None]:
    """One shard, scored by the local engine in a Ray worker."""
    if heartbeat:
        Path(heartbeat).write_text(json.dumps({"pid": os.getpid(), "started": time.time()}))
    # built here, in the worker: a client, a subprocess or a key is not sent over the wire
    built = sources.build(ledger=LayeredLedger(ledger_path or ":memory:", main_ledger),
                          limiter=RemoteLimiter(limiter) if limiter is not None else None, lookup_cache=main_ledger)
    data = dataclasses.replace(from_samples(samples), fingerprint=fingerprints[0], testset_fingerprint=fingerprints[1])
    result = evaluate_with(data, resolve_measures(names, options["k"]), built)
    outcomes = {str(m): outcome for m, outcome in result.outcomes.items()}  # names travel, not spec objects
    return outcomes, result.evidence, (built.judge.stats.as_dict() if built.judge is not None else None)


def evaluate_ray(data: Dataset, metrics: Sequence[str | Measure] | None, *, k: int | None = DEFAULTS.k,
                 view: str | None = None,
                 sources: SourcesDescription | None = None, ledger: str | None = None,
                 shards: int | None = None, address: str | None = None, concurrency: int = DEFAULTS.concurrency,
                 max_retries: int = 3, heartbeat_dir: str | None = None,
                 init_options: dict | None = None) -> EvaluationResult:
    """The local engine's results, scored in shards on a Ray cluster. ``sources``: what each
    worker builds its judge, embedder (API keys come from the workers' environment; an
    OpenAI-compatible embedder's URL defaults to this process's ``OPENAI_BASE_URL``), record
    lookup and criteria from. ``metrics`` are resolved here once (measures as they are);
    each worker parses their canonical names back."""
    measures = resolve_measures(measure_list(metrics), k, view=view)
    names = [str(m) for m in measures]
    ray = _ray()
    sources = sources or SourcesDescription()
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False,
                 **(init_options or {}))
    samples = list(data.samples)
    n = shards or max(1, min(len(samples), int(ray.cluster_resources().get("CPU", 1)) * 2))
    bounds = [round(i * len(samples) / n) for i in range(n + 1)]
    lease_s = (sources.judge or {}).get("timeout", DEFAULTS.timeout) * 2 + 5  # longer than any call with its retry
    limiter = _limiter_actor(ray).remote(concurrency, lease_s) if sources.judge is not None else None
    ledger_dir = Path(ledger).parent if ledger else None
    task = ray.remote(_score_shard).options(max_retries=max_retries, retry_exceptions=False)
    options = {"k": k}
    if sources.embedder not in (None, DEFAULTS.embedder) and not sources.embedder_base_url:
        sources = dataclasses.replace(sources, embedder_base_url=os.environ.get("OPENAI_BASE_URL"))
    refs = []
    for i in range(n):
        shard_ledger = str(ledger_dir / f"ledger-shard-{i}.sqlite") if ledger_dir else None
        beat = str(Path(heartbeat_dir) / f"shard-{i}.json") if heartbeat_dir else None
        refs.append(task.remote(samples[bounds[i]:bounds[i + 1]], names, options,
                                sources, limiter, shard_ledger, ledger, (data.fingerprint, data.testset_fingerprint),
                                beat))
    parts = ray.get(refs)
    if ledger is not None and ledger_dir is not None:
        merge_ledgers(ledger, [str(ledger_dir / f"ledger-shard-{i}.sqlite") for i in range(n)])
    return _combine(data, measures, parts)


def merge_ledgers(target: str, shards: list[str]) -> int:
    """Copy every shard's judgments into ``target`` (INSERT OR IGNORE); returns the rows added."""
    main = Ledger(target)
    try:
        return sum(main.merge_from(path) for path in shards)
    finally:
        main.close()


def _combine(data: Dataset, measures: tuple[Measure, ...],
             parts: list[tuple[dict[str, Sequence[Outcome]], tuple[Any, ...] | None, dict[str, Any] | None]]
             ) -> EvaluationResult:
    outcomes = {m: tuple(o for part in parts for o in part[0][str(m)]) for m in measures}
    evidence = None
    if any(p[1] is not None for p in parts):
        evidence = tuple(e for p in parts for e in (p[1] or ()))
    stats = [p[2] for p in parts if p[2] is not None]
    judge_stats = None
    if stats:
        judge_stats = {key: sum(s[key] for s in stats) for key in ("calls", "reasks", "cached", "failed",
                                                                    "input_tokens", "output_tokens")}
        judge_stats["latency_s"] = sum(s["latency_s"] for s in stats)
        judge_stats["queue_s"] = sum(s.get("queue_s", 0.0) for s in stats)
        by_prompt: dict[str, dict] = {}
        for st in stats:
            for prompt, counts in st["by_prompt"].items():
                merged = by_prompt.setdefault(prompt, dict.fromkeys(counts, 0))
                for key, value in counts.items():
                    merged[key] += value
        judge_stats["by_prompt"] = by_prompt
    return EvaluationResult(data.samples, measures, outcomes, data.fingerprint, data.path,
                            testset_fingerprint=data.testset_fingerprint, evidence=evidence, judge_stats=judge_stats)

