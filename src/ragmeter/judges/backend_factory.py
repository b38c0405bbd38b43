"""``make_backend``: a judge backend from its spec (the kinds of :mod:`ragmeter.core.judge_specs`).

Kept apart from ``backends`` because the local judge's backend is itself built on ``Backend``.
"""

from __future__ import annotations

import os

from ragmeter.core.judge_specs import judge_specs, kind_of, suggestion
from ragmeter.core.settings import DEFAULTS
from ragmeter.judges.backends import AnthropicBackend, Backend, OpenAIBackend
from ragmeter.judges.local import LocalBackend
from ragmeter.judges.transport import JudgeConfigError, Limiter, RetryPolicy


def make_backend(spec: str, *, base_url: str | None = None, api_key: str | None = None,
                 concurrency: int = DEFAULTS.concurrency, policy: RetryPolicy | None = None,
                 limiter: Limiter | None = None) -> Backend:
    """A backend for a judge spec (:func:`ragmeter.core.judge_specs.judge_specs` lists them; the
    local one runs llama.cpp in process).

    ``limiter``: a concurrency limit shared with other backends (the HTTP backends use it
    instead of their own; the in-process local judge runs one call at a time anyway)."""
    kind = kind_of(spec)
    if kind is None:
        meant = suggestion(spec)
        raise JudgeConfigError(f"unknown judge {spec!r}: {f'did you mean {meant}? ' if meant else ''}"
                               f"use {judge_specs()}")
    model = spec.partition(":")[2]
    if kind.prefix == "openai":
        return OpenAIBackend(model, base_url, api_key, concurrency=concurrency, policy=policy, limiter=limiter)
    if kind.prefix == "ollama":  # the same wire, so the same ledger entries as openai:<model> at that URL
        return OpenAIBackend(model, base_url or ollama_url(), api_key or "", concurrency=concurrency, policy=policy,
                             limiter=limiter)
    if kind.prefix == "anthropic":
        return AnthropicBackend(model, base_url, api_key, concurrency=concurrency, policy=policy, limiter=limiter)
    if kind.prefix == "litellm":
        from ragmeter.judges.litellm_backend import LiteLLMBackend

        return LiteLLMBackend(model, base_url, api_key, concurrency=concurrency, policy=policy, limiter=limiter)
    return LocalBackend(model or None)


def ollama_url(environ: dict[str, str] | None = None) -> str:
    """The local Ollama server's OpenAI-compatible URL: ``$OLLAMA_HOST`` (Ollama's own setting,
    ``host:port`` or a URL), else ``http://127.0.0.1:11434``, plus ``/v1``.

    >>> ollama_url({}), ollama_url({"OLLAMA_HOST": "gpu-box:11500"})
    ('http://127.0.0.1:11434/v1', 'http://gpu-box:11500/v1')
    """
    host = (os.environ if environ is None else environ).get("OLLAMA_HOST") or "127.0.0.1:11434"
    if host.startswith("0.0.0.0"):  # the address Ollama listens on, not one to connect to
        host = "127.0.0.1" + host[len("0.0.0.0"):]
    return f"{host if '://' in host else 'http://' + host}".rstrip("/") + "/v1"
