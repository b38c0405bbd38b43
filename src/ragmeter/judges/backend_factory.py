"""``make_backend``: a judge backend from its spec (the kinds of :mod:`ragmeter.core.judge_specs`).

Kept apart from ``backends`` because the local judge's backend is itself built on ``Backend``.
"""

from __future__ import annotations

from ragmeter.core.judge_specs import judge_specs, kind_of
from ragmeter.core.settings import DEFAULTS
from ragmeter.judges.backends import AnthropicBackend, Backend, OpenAIBackend
from ragmeter.judges.given import GivenBackend
from ragmeter.judges.offline.backend import OfflineBackend
from ragmeter.judges.transport import JudgeConfigError, Limiter, RetryPolicy


def make_backend(spec: str, *, base_url: str | None = None, api_key: str | None = None,
                 concurrency: int = DEFAULTS.concurrency, policy: RetryPolicy | None = None,
                 limiter: Limiter | None = None) -> Backend:
    """A backend for a judge spec (:func:`ragmeter.core.judge_specs.judge_specs` lists them; the
    local one is the offline judge: cheap evidence, and llama.cpp in process where installed).

    ``limiter``: a concurrency limit shared with other backends (the HTTP backends use it
    instead of their own; the in-process local judge runs one call at a time anyway)."""
    kind = kind_of(spec)
    if kind is None:
        raise JudgeConfigError(f"unknown judge {spec!r}: use {judge_specs()}")
    model = spec.partition(":")[2]
    if kind.prefix == "openai":
        return OpenAIBackend(model, base_url, api_key, concurrency=concurrency, policy=policy, limiter=limiter)
    if kind.prefix == "anthropic":
        return AnthropicBackend(model, base_url, api_key, concurrency=concurrency, policy=policy, limiter=limiter)
    if kind.prefix == "given":
        return GivenBackend()
    return OfflineBackend(model or None)
