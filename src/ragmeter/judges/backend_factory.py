"""``make_backend``: a judge backend from its name (``openai:<model>``, ``anthropic:<model>``, ``local``).

Kept apart from ``backends`` because the local judge's backend is itself built on ``Backend``.
"""

from __future__ import annotations

from ragmeter.core.settings import DEFAULTS
from ragmeter.judges.backends import AnthropicBackend, Backend, OpenAIBackend
from ragmeter.judges.local import LocalBackend
from ragmeter.judges.transport import JudgeConfigError, Limiter, RetryPolicy


def make_backend(spec: str, *, base_url: str | None = None, api_key: str | None = None,
                 concurrency: int = DEFAULTS.concurrency, policy: RetryPolicy | None = None,
                 limiter: Limiter | None = None) -> Backend:
    """``openai:<model>``, ``anthropic:<model>`` or ``local[:path.gguf]`` (in-process llama.cpp).

    ``limiter``: a concurrency limit shared with other backends (the HTTP backends use it
    instead of their own; the in-process local judge runs one call at a time anyway)."""
    kind, _, model = spec.partition(":")
    if kind == "openai" and model:
        return OpenAIBackend(model, base_url, api_key, concurrency=concurrency, policy=policy, limiter=limiter)
    if kind == "anthropic" and model:
        return AnthropicBackend(model, base_url, api_key, concurrency=concurrency, policy=policy, limiter=limiter)
    if kind == "local":
        return LocalBackend(model or None)
    raise JudgeConfigError(f"unknown judge {spec!r}: use openai:<model>, anthropic:<model>, local or local:<file.gguf>")
