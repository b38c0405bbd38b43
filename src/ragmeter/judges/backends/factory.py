"""``make_backend``: a judge backend from its spec, through :data:`BUILDERS`, one row per kind of
:data:`ragmeter.core.judge_specs.KINDS` (the kinds' help texts and messages are written there,
without loading judge code; a test checks that the two tables list the same prefixes).

A new wire protocol is one module beside this one (a :class:`~ragmeter.judges.backends.http.HTTPBackend`
subclass, say) and one row here, with its row in ``KINDS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragmeter.core.judge_specs import judge_specs, kind_of
from ragmeter.core.settings import DEFAULTS
from ragmeter.judges.backends.anthropic import AnthropicBackend
from ragmeter.judges.backends.base import Backend
from ragmeter.judges.backends.openai import OpenAIBackend
from ragmeter.judges.transport import JudgeConfigError, Limiter, RetryPolicy

#: ``builder(model, base_url, api_key, *, concurrency, policy, limiter)`` -> a backend.
Builder = Callable[..., Backend]


def _local(model: str, base_url: str | None, api_key: str | None, **_: Any) -> Backend:
    """The offline judge (``local``: cheap evidence, the bundled model where installed; or
    ``local:<file.gguf>``, that model asked about uncertain claims), in process; it runs one call
    at a time, so it takes no URL, key or limit."""
    from ragmeter.judges.offline.backend import OfflineBackend  # the embedder and llama.cpp load on first use

    return OfflineBackend(model or None)


def _given(model: str, base_url: str | None, api_key: str | None, **_: Any) -> Backend:
    """The verdicts the data holds (``given``): no model, no call."""
    from ragmeter.judges.backends.given import GivenBackend

    return GivenBackend()


#: The prefix of a judge spec -> what builds its backend.
BUILDERS: dict[str, Builder] = {
    "openai": OpenAIBackend,
    "anthropic": AnthropicBackend,
    "local": _local,
    "given": _given,
}


def make_backend(spec: str, *, base_url: str | None = None, api_key: str | None = None,
                 concurrency: int = DEFAULTS.concurrency, policy: RetryPolicy | None = None,
                 limiter: Limiter | None = None) -> Backend:
    """A backend for a judge spec (:func:`ragmeter.core.judge_specs.judge_specs` lists them; the
    local one is the offline judge, in process).

    ``limiter``: a concurrency limit shared with other backends (the HTTP backends use it
    instead of their own; the in-process local judge runs one call at a time anyway)."""
    kind = kind_of(spec)
    if kind is None:
        raise JudgeConfigError(f"unknown judge {spec!r}: use {judge_specs()}")
    model = spec.partition(":")[2]
    return BUILDERS[kind.prefix](model, base_url, api_key, concurrency=concurrency, policy=policy, limiter=limiter)
