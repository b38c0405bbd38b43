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
    """The bundled model (``local``) or a GGUF file (``local:<file.gguf>``), in process; it runs one
    call at a time, so it takes no URL, key or limit."""
    from ragmeter.judges.local.backend import LocalBackend  # llama.cpp's wrapper, loaded only for this judge

    return LocalBackend(model or None)


#: The prefix of a judge spec -> what builds its backend.
BUILDERS: dict[str, Builder] = {
    "openai": OpenAIBackend,
    "anthropic": AnthropicBackend,
    "local": _local,
}


def make_backend(spec: str, *, base_url: str | None = None, api_key: str | None = None,
                 concurrency: int = DEFAULTS.concurrency, policy: RetryPolicy | None = None,
                 limiter: Limiter | None = None) -> Backend:
    """A backend for a judge spec (:func:`ragmeter.core.judge_specs.judge_specs` lists them; the
    local one runs llama.cpp in process).

    ``limiter``: a concurrency limit shared with other backends (the HTTP backends use it
    instead of their own; the in-process local judge runs one call at a time anyway)."""
    kind = kind_of(spec)
    if kind is None:
        raise JudgeConfigError(f"unknown judge {spec!r}: use {judge_specs()}")
    model = spec.partition(":")[2]
    return BUILDERS[kind.prefix](model, base_url, api_key, concurrency=concurrency, policy=policy, limiter=limiter)
