"""The judge: one async core that asks a backend, validates, re-asks, and records in the ledger.

``Judge.ask(request)``:

1. looks the request up in the ledger (key: backend, model, decoding, prompt id and hash,
   schema hash, input hash): a stored judgment is returned with no call;
2. otherwise asks the backend, then checks the reply: it must be JSON, complete (not cut off
   at max_tokens) and valid against the request's JSON Schema;
3. an invalid reply gets at most ``max_reasks`` re-asks that show the judge its own reply and
   the errors; for keyed lists (one verdict per claim) only the missing items are asked for,
   and the valid ones are kept;
4. the outcome is written to the ledger before it is returned: the validated object, or a
   failure with the raw reply kept (``JudgeOutputError``: that item fails, the run goes on).
   Never a NaN and never a guessed default.

Transport failures (timeouts, 5xx after retries) and replies that are not an envelope of the
protocol (an HTML page with status 200, a message that is a string, 100,000 levels of
nesting) are not stored: that item fails, and a rerun asks again. ``retry_failed`` re-asks
the judgments stored as failed (a reply that never validated) and replaces them when the
new reply validates. Configuration failures (401/403/404, no key) stop the whole run.
``Budget`` stops a run before a call would pass the cap, leaving it resumable.
Identical requests asked at once are sent once: the others wait for that judgment. Within a
session (:meth:`Judge.session`: one evaluation with all its stages and blocks, one
:meth:`Judge.arun`), a request whose ask failed without storing anything (transport, an
unreadable envelope) is not asked again: an identical request later in the session gets the
same failure, with no call (a new session, a rerun, asks again). With the judgment stored
for the others, every request key is asked at most once per session.
Reply text, errors and values are redacted (``core.secrets``) before they are stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ragmeter.core.aio import run_sync
from ragmeter.core.errors import JudgeOutputError, RagmeterError
from ragmeter.core.progress import Progress
from ragmeter.core.secrets import redact, redact_value
from ragmeter.core.settings import DEFAULTS
from ragmeter.judges.backends import Backend, Decoding, Reply
from ragmeter.judges.budget import Budget
from ragmeter.judges.prompts import Prompt
from ragmeter.judges.replies import Keyed, digest, extract_json, schema_errors
from ragmeter.judges.transport import (
    JudgeReplyError,
    JudgeTransportError,
    RequestTooLong,
)
from ragmeter.ledger.sqlite import Ledger

MAX_ECHO = 4000  # characters of a bad reply shown back to the judge in a re-ask


@dataclass(frozen=True)
class JudgeRequest:
    prompt: Prompt
    inputs: Mapping[str, Any]
    schema: dict
    schema_name: str
    keyed: Keyed | None = None
    logprobs: bool = False  # ask for token log-probabilities where the backend offers them
    parts: Mapping[str, Any] | None = field(default=None, compare=False)  # the inputs, structured (local judge)

    def messages(self) -> list[dict]:
        system, user = self.prompt.render(self.inputs)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class Judgment:
    key: str
    ok: bool
    value: Any
    error: str | None
    raw: str | None
    calls: int
    reasks: int
    input_tokens: int
    output_tokens: int
    cached: bool
    logprobs: list | None = None
    latency_s: float = 0.0  # on the wire, summed over the calls
    queue_s: float = 0.0  # waiting for a concurrency slot before them


@dataclass
class _Tally:
    """What the attempts at one request spent, counted as they happen (kept when none validates)."""

    calls: int = 0
    reasks: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency: float = 0.0
    queue: float = 0.0

    def add(self, reply: Reply) -> None:
        self.calls += 1
        self.latency += reply.latency_s
        self.queue += reply.queue_s
        self.tokens_in += reply.input_tokens
        self.tokens_out += reply.output_tokens


@dataclass
class JudgeStats:
    calls: int = 0
    reasks: int = 0
    cached: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0  # on the wire, from each request's start to its reply, summed over calls made (not cached)
    queue_s: float = 0.0  # before that, waiting for a concurrency slot (or a throttling pause), summed likewise
    unreachable: int = 0  # items that failed for transport or envelope reasons (not stored, counted in failed)
    too_long: int = 0  # items the judge cannot take (a prompt past its context window; counted in failed)
    shared: int = 0  # identical requests answered by a call already in flight
    in_flight: int = 0  # calls sent and not answered yet (the progress heartbeat shows them)
    generated_tokens: int = 0  # tokens a backend reported as it generated them (Backend.tokens_generated)
    by_prompt: dict = field(default_factory=dict)
    transport: dict = field(default_factory=dict)  # the backend's HTTP counts (requests sent, retries)
    wire: bool = False  # whether ``transport`` is an HTTP backend's (it counts the requests on the wire)

    @property
    def sending(self) -> int:
        """Calls on the wire now: an HTTP backend's requests holding a concurrency slot (at most
        the concurrency; the others wait for a slot), else the calls asked and not answered."""
        return int(self.transport.get("in_flight", 0)) if self.wire else self.in_flight

    def add_unreachable(self, prompt_id: str, why: Exception | None = None) -> None:
        """One item failed without a judgment: unreachable, or too long for the judge (``why``)."""
        self.failed += 1
        if isinstance(why, RequestTooLong):
            self.too_long += 1
        else:
            self.unreachable += 1
        self.by_prompt.setdefault(prompt_id, {"calls": 0, "cached": 0, "input_tokens": 0, "output_tokens": 0})

    def add(self, prompt_id: str, j: Judgment) -> None:
        self.calls += j.calls
        self.reasks += j.reasks
        self.cached += j.cached
        self.failed += not j.ok
        if not j.cached:
            self.input_tokens += j.input_tokens
            self.output_tokens += j.output_tokens
            self.latency_s += j.latency_s
            self.queue_s += j.queue_s
        per = self.by_prompt.setdefault(prompt_id, {"calls": 0, "cached": 0, "input_tokens": 0, "output_tokens": 0})
        per["calls"] += j.calls
        per["cached"] += j.cached
        if not j.cached:
            per["input_tokens"] += j.input_tokens
            per["output_tokens"] += j.output_tokens

    def as_dict(self) -> dict:
        return {"calls": self.calls, "reasks": self.reasks, "cached": self.cached, "failed": self.failed,
                "unreachable": self.unreachable, **({"too_long": self.too_long} if self.too_long else {}),
                "shared": self.shared,
                "requests": self.transport.get("requests", self.calls), "retries": self.transport.get("retries", 0),
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "latency_s": round(self.latency_s, 6), "queue_s": round(self.queue_s, 6), "by_prompt": self.by_prompt}


class Judge:
    """A backend plus decoding settings, a ledger, a re-ask bound and an optional budget.

    Every judgment is stored in the ledger before it is used, under a key made of the backend,
    model, decoding settings, prompt id and hash, schema and inputs: asking again, in this run
    or a later one, costs no call. A reply that never validates against the schema (after
    ``max_reasks`` re-asks) is stored and returned as failed, with the reply kept; that item
    fails, the run goes on.

    Parameters
    ----------
    backend : Backend
        The model that answers (:class:`~ragmeter.judges.backends.Backend`; ``make_backend``
        builds one from a judge spec, :mod:`ragmeter.core.judge_specs`).
    ledger : Ledger, optional
        Where judgments are stored; default: a throwaway in-memory one.
    decoding : Decoding, optional
        Temperature, seed and token limit (part of every ledger key); default temperature 0.
    max_reasks : int, default 2
        How many times a reply that does not validate is asked again, with the problem named.
    budget : Budget, optional
        A token (and USD) cap: the run stops with :class:`BudgetExceeded` before passing it.

    Attributes
    ----------
    stats : JudgeStats
        Calls, re-asks, cached judgments and tokens, per prompt.

    Examples
    --------
    >>> from ragmeter.judges import Judge, JudgeRequest, ScriptedBackend, load_prompt
    >>> from ragmeter.judges.schemas import NEEDED_SENTENCES
    >>> from ragmeter.ledger import Ledger
    >>> backend = ScriptedBackend(lambda prompt_id, inputs, messages: {"needed": [1]})
    >>> judge = Judge(backend, ledger=Ledger(":memory:"))
    >>> request = JudgeRequest(load_prompt("context.relevance"),
    ...                        {"question": "How long is the R2 warranty?",
    ...                         "sentences": "1. The R2 has a 24-month warranty.\\n2. Returns: 30 days."},
    ...                        NEEDED_SENTENCES, "needed_sentences")
    >>> [(j.ok, j.value, j.cached) for j in judge.run([request])]
    [(True, {'needed': [1]}, False)]
    >>> [(j.value, j.cached) for j in judge.run([request])], backend.calls  # from the ledger
    ([({'needed': [1]}, True)], 1)
    """

    def __init__(self, backend: Backend, *, ledger: Ledger | None = None, decoding: Decoding | None = None,
                 max_reasks: int = DEFAULTS.max_reasks, budget: Budget | None = None,
                 retry_failed: bool = False) -> None:
        self.backend = backend
        self.ledger = ledger if ledger is not None else Ledger(":memory:")
        self.decoding = decoding or Decoding()
        self.max_reasks = max_reasks
        self.budget = budget
        self.retry_failed = retry_failed
        self.stats = JudgeStats()
        http = getattr(backend, "stats", None)
        if isinstance(http, dict):
            self.stats.transport = http  # the same dict: counts every HTTP request, retried ones too
            self.stats.wire = True
        self._in_flight: dict[str, asyncio.Future] = {}
        try:
            backend.token_sink = self._count_tokens
        except AttributeError:  # a backend that takes no attributes (frozen, slots): it reports no tokens
            pass
        self._retried: set[str] = set()  # failed judgments already re-asked in this process
        self._sessions = 0  # open sessions (they nest)
        self._unreachable: dict[str, JudgeTransportError] = {}  # key -> why its ask failed, in this session

    @contextmanager
    def session(self) -> Iterator[Judge]:
        """One evaluation's worth of asks (sessions nest: the outermost one counts): a request
        whose ask failed without storing anything is not asked again until it ends."""
        self._sessions += 1
        try:
            yield self
        finally:
            self._sessions -= 1
            if self._sessions == 0:
                self._unreachable.clear()

    def _count_tokens(self, n: int) -> None:
        self.stats.generated_tokens += n

    @property
    def identity(self) -> dict:
        """What goes into provenance: never a key or a URL with credentials."""
        return {"backend": self.backend.name, "model": self.backend.model, "decoding": self.decoding.as_dict(),
                **self.backend.description}

    def key(self, request: JudgeRequest) -> str:
        key = {"backend": self.backend.name, "model": self.backend.model, "decoding": self.decoding.as_dict(),
               "prompt": request.prompt.id, "prompt_hash": request.prompt.hash,
               "schema": digest(request.schema), "inputs": digest(dict(request.inputs))}
        if self.backend.key_extra:
            key["backend_setup"] = self.backend.key_extra
        return digest(key)

    def is_stored(self, request: JudgeRequest) -> bool:
        entry = self.ledger.get(self.key(request))
        return entry is not None and not self._retries(entry)

    def _retries(self, entry: Any) -> bool:
        """Whether a stored judgment is asked again: a failed one, under ``retry_failed``, once."""
        return self.retry_failed and entry.status != "ok" and entry.key not in self._retried

    async def ask(self, request: JudgeRequest) -> Judgment:
        """The judgment for ``request``; identical requests in flight share one call, and one
        that failed earlier in the session fails again with no call."""
        key = self.key(request)
        failed = self._unreachable.get(key)
        if failed is not None:
            self.stats.shared += 1
            self.stats.add_unreachable(request.prompt.id, failed)
            raise type(failed)(str(failed))
        running = self._in_flight.get(key)
        if running is not None and running.get_loop() is asyncio.get_running_loop():
            self.stats.shared += 1
            try:
                j = await asyncio.shield(running)
            except JudgeTransportError as exc:
                self.stats.add_unreachable(request.prompt.id, exc)
                raise
            self.stats.failed += not j.ok
            return Judgment(**{**j.__dict__, "calls": 0, "reasks": 0, "cached": True})
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            j = await self._ask(request, key)
        except BaseException as exc:
            if isinstance(exc, JudgeTransportError) and self._sessions:
                self._unreachable[key] = exc  # nothing stored: not asked again in this session
            if not future.done():
                future.set_exception(exc)
                future.exception()  # retrieved: a waiter re-raises it, no "never retrieved" warning
            raise
        else:
            future.set_result(j)
            return j
        finally:
            if self._in_flight.get(key) is future:
                del self._in_flight[key]

    async def _ask(self, request: JudgeRequest, key: str) -> Judgment:
        entry = self.ledger.get(key)
        if entry is not None and not self._retries(entry):
            value = self.backend.rescore(request, entry.parsed, entry.logprobs) if entry.status == "ok" else None
            j = Judgment(key, entry.status == "ok", value, entry.error, entry.raw, 0, 0,
                         entry.input_tokens, entry.output_tokens, cached=True, logprobs=entry.logprobs)
            self.stats.add(request.prompt.id, j)
            return j
        if entry is not None:
            self._retried.add(key)
        tally = _Tally()
        try:
            value, text, logprobs = await self._ask_until_valid(request, tally)
            value = self.backend.rescore(request, value, logprobs)  # as a stored one is read back
            j = Judgment(key, True, value, None, text, tally.calls, tally.reasks, tally.tokens_in, tally.tokens_out,
                         cached=False, logprobs=logprobs, latency_s=tally.latency, queue_s=tally.queue)
        except JudgeOutputError as exc:  # stored as failed, with the reply kept: this item only
            j = Judgment(key, False, None, f"{type(exc).__name__}: {exc}", exc.raw, tally.calls, tally.reasks,
                         tally.tokens_in, tally.tokens_out, cached=False, latency_s=tally.latency, queue_s=tally.queue)
        except JudgeTransportError as exc:
            self.stats.calls += tally.calls
            self.stats.add_unreachable(request.prompt.id, exc)
            raise
        except RagmeterError:  # a setting, the budget, a local judge that cannot start: the run stops
            self.stats.calls += tally.calls
            raise
        except Exception as exc:  # noqa: BLE001 -- a reply no check foresaw: this item fails, nothing stored
            self.stats.calls += tally.calls
            self.stats.add_unreachable(request.prompt.id)
            raise JudgeReplyError(redact(f"{self.backend.name}: the reply could not be read "
                                         f"({type(exc).__name__}: {str(exc)[:200]}); nothing was stored")) from None
        key_text = getattr(self.backend, "_key", None)
        j = Judgment(j.key, j.ok, redact_value(j.value, key_text) if j.value is not None else None,
                     redact(j.error, key_text) if j.error else j.error,
                     redact(j.raw, key_text) if j.raw else j.raw, j.calls, j.reasks, j.input_tokens,
                     j.output_tokens, j.cached, j.logprobs, j.latency_s, j.queue_s)
        self.ledger.put(key=key, backend=self.backend.name, model=self.backend.model, decoding=self.decoding.as_dict(),
                        prompt_id=request.prompt.id, prompt_hash=request.prompt.hash,
                        schema_hash=digest(request.schema),
                        input_hash=digest(dict(request.inputs)), status="ok" if j.ok else "failed", parsed=j.value,
                        raw=j.raw, error=j.error, input_tokens=j.input_tokens, output_tokens=j.output_tokens,
                        latency_s=j.latency_s, calls=j.calls, reasks=j.reasks, logprobs=j.logprobs,
                        replace_failed=entry is not None)
        self.stats.add(request.prompt.id, j)
        return j

    async def _ask_until_valid(self, request: JudgeRequest, tally: _Tally) -> tuple[Any, str | None, list | None]:
        """(value, reply text, log-probabilities) of the first reply that validates, re-asking at
        most ``max_reasks`` times; ``tally`` counts calls and tokens as they are spent.

        Raises ``JudgeOutputError`` (with the last reply) when no reply validates."""
        base = request.messages()
        messages = list(base)
        found: dict = {}
        problem: str | None = "no reply"
        text: str | None = None
        for attempt in range(self.max_reasks + 1):
            estimate_in = sum(len(m["content"]) for m in messages) // 4 + 1
            if self.budget:
                await self.budget.reserve(estimate_in, self.decoding.max_tokens)
            used = (0, 0)
            self.stats.in_flight += 1
            try:
                reply = await self.backend.complete(messages, request.schema, request.schema_name, self.decoding,
                                                    request)
                used = (reply.input_tokens, reply.output_tokens)
            finally:
                self.stats.in_flight -= 1
                if self.budget:
                    await self.budget.settle(estimate_in, self.decoding.max_tokens, *used)
            tally.add(reply)
            text = reply.text
            value, problem, missing = self._check(request, reply, found)
            if problem is None:
                return value, text, reply.logprobs
            if attempt == self.max_reasks:
                break
            tally.reasks += 1
            messages = base + [{"role": "assistant", "content": (text or "")[:MAX_ECHO]},
                               {"role": "user", "content": _reask(request, problem, missing)}]
        raise JudgeOutputError(f"{problem} (after {tally.reasks} re-asks)", raw=text)

    @staticmethod
    def _check(request: JudgeRequest, reply, found: dict) -> tuple[Any, str | None, list]:
        if reply.truncated:
            return None, "the reply was cut off at the token limit", []
        try:
            value = extract_json(reply.text)
        except ValueError as exc:
            return None, str(exc), []
        except RecursionError:
            return None, "the reply is JSON nested too deep to read", []
        keyed = request.keyed
        if keyed is not None:
            got, _ = keyed.split(value, request.schema)
            for k, item in got.items():
                found.setdefault(k, item)
            missing = [k for k in keyed.expected if k not in found]
            if missing:
                return None, f"no valid item for {keyed.key} {', '.join(map(str, missing))}", missing
            value = keyed.merged(found)
        try:
            errors = schema_errors(value, request.schema)
        except RecursionError:
            errors = ["(top level): the reply is nested too deep to check"]
        if errors:
            return None, "; ".join(errors[:5]), []
        return value, None, []

    async def ask_all(self, requests: Sequence[JudgeRequest], *, progress: Progress | None = None
                      ) -> list[Judgment | Exception]:
        """Ask every request concurrently (the backend bounds concurrency). Transport failures
        come back as exceptions in place; configuration errors and budget stops end the run.
        ``progress.advance(i)`` is called as request ``i`` settles."""

        async def ask_one(i: int, r: JudgeRequest) -> Judgment | Exception:
            try:
                return await self.ask(r)
            except JudgeTransportError as exc:
                return exc
            finally:
                if progress is not None:
                    progress.advance(i)

        tasks = [asyncio.ensure_future(ask_one(i, r)) for i, r in enumerate(requests)]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:  # a setting, the budget, a ledger that cannot be written, Ctrl-C: the run stops
            for t in tasks:  # every other ask ends here, not in asyncio.run's shutdown (where a second
                t.cancel()  # ledger error was "unhandled exception during asyncio.run() shutdown")
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def arun(self, requests: Iterable[JudgeRequest], *, progress: Progress | None = None
                   ) -> list[Judgment | Exception]:
        """:meth:`ask_all` in a session, then the backend's connections closed (they belong to this loop)."""
        try:
            with self.session():
                return await self.ask_all(list(requests), progress=progress)
        finally:
            await self.backend.aclose()

    def run(self, requests: Iterable[JudgeRequest], *, progress: Progress | None = None
            ) -> list[Judgment | Exception]:
        """The thin sync wrapper of :meth:`arun`; inside a running event loop (a notebook) it
        runs on its own loop in a worker thread (:func:`ragmeter.core.aio.run_sync`)."""
        return run_sync(lambda: self.arun(requests, progress=progress))

    def plan(self, requests: Iterable[JudgeRequest]) -> dict:
        """A dry run: how many calls are still needed, and an estimate of their tokens (in all,
        and by prompt: ``input_tokens_by_prompt``)."""
        pending = [r for r in requests if not self.is_stored(r)]
        by_prompt: dict[str, int] = {}
        for r in pending:
            tokens = sum(len(m["content"]) for m in r.messages()) // 4 + 1
            by_prompt[r.prompt.id] = by_prompt.get(r.prompt.id, 0) + tokens
        return {"calls": len(pending), "estimated_input_tokens": sum(by_prompt.values()),
                "max_output_tokens": len(pending) * self.decoding.max_tokens, "input_tokens_by_prompt": by_prompt}


def _reask(request: JudgeRequest, problem: str, missing: list) -> str:
    if request.keyed is not None and missing:
        k = request.keyed
        return (f"Your reply above could not be used: {problem}. Reply again with only a JSON object whose "
                f"\"{k.field}\" list holds the items for {k.key} {', '.join(map(str, missing))} (the other items "
                f"are already recorded).")
    return (f"Your reply above could not be used: {problem}. Reply again with only one JSON object that follows "
            f"the requested schema.")

