"""The one place a :class:`~ragmeter.judges.judge.Judge` is built from settings.

Every caller goes through :func:`make_judge`: ``ragmeter eval`` (through the run driver),
``watch``, ``pairwise``, ``judge-check``, and each Ray worker (through
:func:`judge_from_description`, since a judge with its open ledger and HTTP client cannot be
sent to another process, but its description can). Concurrency, timeout, re-asks and the
budget come from :class:`~ragmeter.core.settings.Settings`, so their defaults are the ones
stated there.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragmeter.core.settings import AUTO_JUDGE, DEFAULTS, NO_JUDGE, InvalidSettingError, Settings
from ragmeter.judges.backends import factory  # make_backend read at call time: tests may swap it
from ragmeter.judges.backends.base import Backend
from ragmeter.judges.backends.scripted import NoCallBackend, ScriptedBackend
from ragmeter.judges.judge import Budget, Judge
from ragmeter.judges.local import model as local_model
from ragmeter.judges.transport import Limiter, RetryPolicy
from ragmeter.ledger.sqlite import Ledger

#: How a Ray task receives a judge: the description's keys and the settings they carry.
WIRE = {"judge": "judge", "base_url": "judge_base_url", "concurrency": "concurrency", "timeout": "timeout",
        "max_reasks": "max_reasks", "retry_failed": "retry_failed"}


def default_judge() -> str | None:
    """The judge ``auto`` stands for: the bundled offline judge when ``ragmeter[local]`` or
    ``ragmeter[embeddings]`` is installed (nothing is imported or loaded to find out), else none."""
    from ragmeter.judges.offline.backend import embeddings_available

    return "local" if local_model.local_available() or embeddings_available() else None


def make_judge(spec: str | Backend | None, settings: Settings = DEFAULTS, *,
               ledger: Ledger | str | None = None, limiter: Limiter | None = None) -> Judge | None:
    """A judge for ``spec``, or None for ``None`` / ``"none"``.

    ``spec``: a judge spec (:func:`ragmeter.core.judge_specs.judge_specs`), ``auto``
    (:func:`default_judge`), or a ready :class:`Backend`. From ``settings``: the
    server URL, concurrency, timeout per call, re-asks, and the token or dollar budget with
    its prices (the flags, else the bundled snapshot's),
    and ``retry_failed``. ``ledger``: an open ledger or a path; None opens ``settings.ledger_path``.
    ``limiter``: a concurrency limit shared with other judges (the Ray engine's cluster-wide
    one), used by an HTTP backend instead of its own.

    >>> judge = make_judge(ScriptedBackend(lambda request: {}), Settings(max_reasks=1), ledger=":memory:")
    >>> judge.max_reasks, judge.budget is None
    (1, True)
    >>> make_judge("none") is None
    True
    """
    if spec == AUTO_JUDGE:
        spec = default_judge()
    if spec is None or spec == NO_JUDGE:
        return None
    if isinstance(spec, Backend):
        backend = spec
    else:
        backend = factory.make_backend(
            spec, base_url=settings.judge_base_url, concurrency=settings.concurrency,
            policy=RetryPolicy(timeout=settings.timeout), limiter=limiter)
    budget = None
    if settings.budget_tokens or settings.budget_usd is not None:
        price = settings.judge_price  # the flags, else the bundled snapshot's (core/prices.py)
        budget = Budget(max_tokens=settings.budget_tokens, max_usd=settings.budget_usd,
                        price_in=price.input if price else None, price_out=price.output if price else None)
    store = ledger if isinstance(ledger, Ledger) else Ledger(settings.ledger_path if ledger is None else ledger)
    return Judge(backend, ledger=store, max_reasks=settings.max_reasks, budget=budget,
                 retry_failed=settings.retry_failed)


#: The key a dry run's backend is built with: it is never sent (the backend makes no call).
PLANNING_KEY = "dry-run-no-key-needed"


def planning_judge(spec: str | None, settings: Settings = DEFAULTS) -> Judge | None:
    """The judge a dry run plans with, or None for no judge: the real backend's identity
    (name, model, setup), so that its ledger keys are the real judge's, on a
    :class:`NoCallBackend` (no client, no API key needed, a call fails); the ledger
    (``settings.ledger_path``) is read when it exists and never created.

    >>> judge = planning_judge("anthropic:claude-x", Settings(ledger=":memory:"))
    >>> judge.backend.name, judge.backend.model, type(judge.backend).__name__
    ('anthropic', 'claude-x', 'NoCallBackend')
    """
    if spec == AUTO_JUDGE:
        spec = default_judge()
    if spec is None or spec == NO_JUDGE:
        return None
    real = factory.make_backend(spec, base_url=settings.judge_base_url, api_key=PLANNING_KEY)
    backend = NoCallBackend(real.name, real.model)
    backend.key_extra = real.key_extra
    path = settings.ledger_path
    ledger = Ledger(path) if path != ":memory:" and Path(path).is_file() else Ledger(":memory:")
    return Judge(backend, ledger=ledger, max_reasks=settings.max_reasks, retry_failed=settings.retry_failed)


def describe_judge(settings: Settings) -> dict[str, Any] | None:
    """A picklable description of the judge ``settings`` ask for (no key, no client), for
    :func:`judge_from_description` in another process; None when there is no judge."""
    if settings.judge_spec is None:
        return None
    return {key: getattr(settings, name) for key, name in WIRE.items()}


def judge_from_description(description: Mapping[str, Any], ledger: Ledger, *,
                           limiter: Limiter | None = None) -> Judge:
    """The judge a description stands for (API keys come from this process's environment).

    ``{"judge": "openai:m", "base_url": ..., "concurrency": ..., "timeout": ..., "max_reasks": ...}``
    (keys left out take the :class:`Settings` defaults), or ``{"scripted": "module:function"}``
    for an in-process scripted backend (tests, benchmarks). ``limiter``: as for :func:`make_judge`.
    """
    settings = DEFAULTS.replace(**{name: description[key] for key, name in WIRE.items()
                                   if key in description and key != "judge"})
    spec: str | Backend
    if "scripted" in description:
        module, _, name = str(description["scripted"]).partition(":")
        spec = ScriptedBackend(getattr(importlib.import_module(module), name))
    else:
        spec = description["judge"]
    judge = make_judge(spec, settings, ledger=ledger, limiter=limiter)
    if judge is None:
        raise InvalidSettingError("judge", f"the judge description {dict(description)!r} names no judge")
    return judge
