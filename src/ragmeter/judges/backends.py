"""Judge backends: OpenAI-compatible chat completions, Anthropic Messages, and scripted.

Each backend turns (messages, JSON schema) into one reply text plus token usage. API keys
are read from the environment or passed in, sent only in the request header, and never
logged, stored in the ledger or put in an error message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from ragmeter.core.network import http_options
from ragmeter.core.secrets import redact
from ragmeter.core.settings import DEFAULTS
from ragmeter.judges import envelope
from ragmeter.judges.transport import (
    AdaptiveLimiter,
    JudgeConfigError,
    JudgeReplyError,
    Limiter,
    RetryPolicy,
    send,
)


@dataclass(frozen=True)
class Reply:
    text: str
    input_tokens: int
    output_tokens: int
    latency_s: float  # on the wire: from the request's start (holding a concurrency slot) to its reply
    truncated: bool = False
    logprobs: list | None = None  # OpenAI-style per-token logprobs, when asked for and offered
    queue_s: float = 0.0  # waiting for a concurrency slot (or a throttling pause) before that


@dataclass
class Decoding:
    """Settings that can change a reply, so they are part of every ledger key."""

    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int = 2048

    def as_dict(self) -> dict:
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}


class Backend:
    """The extension point for a judge model: turn chat messages plus a JSON schema into one reply.

    To add a model server or an in-process model, subclass and implement:

    - ``name`` and ``model`` (str): which backend and model answered; both go into every ledger
      key and every score's provenance, so replies from two models are never mixed up;
    - ``async complete(messages, schema, schema_name, decoding, request=None) -> Reply``: one
      reply text (ideally JSON that validates against ``schema``) and the token counts.
      :class:`~ragmeter.judges.Judge` validates it, re-asks a bounded number of times and
      stores the judgment; never log or store a credential here.

    Optional: ``supports_logprobs``; ``key_extra`` (setup that changes replies, such as a model
    file's hash: added to the ledger key) and ``description`` (more setup, for provenance), as
    class attributes or properties; ``refuses(prompt_id)`` (a prompt this backend does not
    serve: the metrics that need it are NotComputed with the reason); ``rescore`` (re-decide a
    stored reply, e.g. with a new decision rule, without a call); ``aclose()``.

    The constructor is the subclass's own (an API key, a URL, a model path, ...).

    Examples
    --------
    A backend that answers every question the same way (a real one calls a model):

    >>> import json
    >>> from ragmeter.judges import Backend, Judge, JudgeRequest, Reply, load_prompt
    >>> from ragmeter.judges.schemas import NEEDED_SENTENCES
    >>> class FirstSentence(Backend):
    ...     name, model = "fixed", "first-sentence"
    ...     async def complete(self, messages, schema, schema_name, decoding, request=None):
    ...         return Reply(json.dumps({"needed": [1]}), input_tokens=40, output_tokens=6, latency_s=0.0)
    >>> request = JudgeRequest(load_prompt("context.relevance"),
    ...                        {"question": "How long is the R2 warranty?",
    ...                         "sentences": "1. The R2 has a 24-month warranty.\\n2. Returns: 30 days."},
    ...                        NEEDED_SENTENCES, "needed_sentences")
    >>> [j.value for j in Judge(FirstSentence()).run([request])]
    [{'needed': [1]}]
    """

    name = "backend"
    model = ""
    base_url: str | None = None
    supports_logprobs = False

    @property
    def key_extra(self) -> dict | None:
        """Backend setup that changes replies (model file hash, recipe): part of every ledger key."""
        return None

    @property
    def description(self) -> dict:
        """More of the backend's setup, for provenance."""
        return {}

    def rescore(self, request: Any, value: Any, logprobs: list | None) -> Any:
        """A stored judgment's value as this backend would decide it now (default: as stored)."""
        return value

    def refuses(self, prompt_id: str) -> str | None:
        """Why this backend does not serve a prompt (or a prompt part, ``<prompt id>:<field>``),
        or None when it does. The engine marks the metrics that read it NotComputed with the reason."""
        return None

    async def complete(self, messages: list[dict], schema: dict, schema_name: str, decoding: Decoding,
                       request: Any = None) -> Reply:
        """One reply to ``messages``: what a backend must implement.

        Parameters
        ----------
        messages : list of dict
            Chat messages (``{"role": "system" | "user" | "assistant", "content": str}``); on a
            re-ask, the previous reply and the problem with it are appended.
        schema : dict
            The JSON Schema the reply must validate against (send it as structured output
            where the server offers that).
        schema_name : str
            A short name for the schema (some APIs ask for one).
        decoding : Decoding
            Temperature, seed and token limit to use.
        request : JudgeRequest, optional
            The whole request (prompt id, inputs), for backends that decide without a prompt.

        Returns
        -------
        Reply
            The reply text and its token counts, latency and whether it was cut off.

        Raises
        ------
        JudgeTransportError
            The server could not be reached or kept failing (that item fails, the run goes on).
        JudgeConfigError
            A setup the run cannot go on with (a rejected API key, an unknown model).
        """
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


class _HTTPBackend(Backend):
    """An HTTP backend. ``limiter``: a shared concurrency limit and back-off (e.g. one for a
    whole cluster); by default the backend's own ``AdaptiveLimiter(concurrency)``."""

    def __init__(self, model: str, base_url: str, api_key: str | None, *, concurrency: int = DEFAULTS.concurrency,
                 policy: RetryPolicy | None = None, limiter: Limiter | None = None) -> None:
        self.model, self._key = model, api_key
        self.base_url: str = base_url.rstrip("/")
        self.policy = policy or RetryPolicy()
        self.limiter: Limiter = limiter if limiter is not None else AdaptiveLimiter(concurrency)
        self.stats: dict[str, int] = {}
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.policy.timeout, **http_options())
        return self._client

    async def _post(self, path: str, payload: dict, headers: dict,
                    timing: dict[str, float] | None = None) -> httpx.Response:
        return await send(lambda: self.client.post(f"{self.base_url}{path}", json=payload, headers=headers),
                          limiter=self.limiter, policy=self.policy, backend=self.name, stats=self.stats,
                          timing=timing)

    def _redact(self, text: str) -> str:
        return redact(text, self._key)

    def _envelope(self, read: Callable[[bytes, str], envelope.Envelope], response: httpx.Response) -> envelope.Envelope:
        """The envelope read by ``read``; a broken one fails this item (redacted message)."""
        try:
            return read(response.content, self.name)
        except JudgeReplyError as exc:
            raise JudgeReplyError(self._redact(str(exc))) from None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


class OpenAIBackend(_HTTPBackend):
    """``openai:<model>``: the chat-completions wire protocol (OpenAI, vLLM, Ollama, llama.cpp
    server, LM Studio, LiteLLM). Honours ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``. Asks for
    strict JSON-schema output; a server that rejects it gets JSON mode with the schema in
    the prompt."""

    name = "openai"
    DEFAULT_URL = "https://api.openai.com/v1"
    supports_logprobs = True

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, **kw: Any) -> None:
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or self.DEFAULT_URL
        api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not api_key and base_url.rstrip("/") == self.DEFAULT_URL:
            raise JudgeConfigError("openai: no API key: set OPENAI_API_KEY, or point --judge-base-url "
                                   "(OPENAI_BASE_URL) at an OpenAI-compatible server")
        super().__init__(model, base_url, api_key, **kw)
        self.json_mode = False

    async def complete(self, messages, schema, schema_name, decoding, request=None) -> Reply:
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": decoding.temperature,
                                   "max_tokens": decoding.max_tokens}
        if decoding.seed is not None:
            payload["seed"] = decoding.seed
        if request is not None and getattr(request, "logprobs", False):
            payload["logprobs"], payload["top_logprobs"] = True, 10
        timing: dict[str, float] = {}
        for _ in range(2):
            if self.json_mode:
                payload["response_format"] = {"type": "json_object"}
                payload["messages"] = _with_schema_hint(messages, schema)
            else:
                payload["response_format"] = {"type": "json_schema",
                                              "json_schema": {"name": schema_name, "schema": schema, "strict": True}}
            response = await self._post("/chat/completions", payload, headers, timing)
            if response.status_code == 400 and not self.json_mode and _mentions_format(response.text):
                self.json_mode = True  # the server has no structured output: fall back to JSON mode
                continue
            break
        if response.status_code == 400:
            raise JudgeConfigError(f"openai: the server rejected the request (HTTP 400): "
                                   f"{self._redact(response.text[:300])}")
        env = self._envelope(envelope.openai, response)
        return Reply(env.text, env.input_tokens, env.output_tokens, timing.get("wire_s", 0.0),
                     truncated=env.truncated, logprobs=env.logprobs, queue_s=timing.get("queue_s", 0.0))


class AnthropicBackend(_HTTPBackend):
    """``anthropic:<model>``: the Messages API, structured output through a forced tool call
    whose ``input_schema`` is the answer schema. Key from ``ANTHROPIC_API_KEY``."""

    name = "anthropic"
    DEFAULT_URL = "https://api.anthropic.com"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, **kw: Any) -> None:
        base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or self.DEFAULT_URL
        api_key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            raise JudgeConfigError("anthropic: no API key: set ANTHROPIC_API_KEY")
        super().__init__(model, base_url, api_key, **kw)

    async def complete(self, messages, schema, schema_name, decoding, request=None) -> Reply:
        headers = {"x-api-key": self._key, "anthropic-version": "2023-06-01"}
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        payload = {
            "model": self.model, "max_tokens": decoding.max_tokens, "temperature": decoding.temperature,
            "system": system, "messages": [m for m in messages if m["role"] != "system"],
            "tools": [{"name": schema_name, "description": "Record the answer.", "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": schema_name},
        }
        timing: dict[str, float] = {}
        response = await self._post("/v1/messages", payload, headers, timing)
        if response.status_code == 400:
            raise JudgeConfigError(f"anthropic: the server rejected the request (HTTP 400): "
                                   f"{self._redact(response.text[:300])}")
        env = self._envelope(envelope.anthropic, response)
        return Reply(env.text, env.input_tokens, env.output_tokens, timing.get("wire_s", 0.0),
                     truncated=env.truncated, queue_s=timing.get("queue_s", 0.0))


@dataclass
class ScriptedBackend(Backend):
    """Fixed answers for tests: ``respond(prompt_id, inputs, messages) -> dict | str``."""

    respond: Callable[..., Any]
    model: str = "scripted"
    name: str = "scripted"
    calls: int = 0
    seen: list = field(default_factory=list)

    async def complete(self, messages, schema, schema_name, decoding, request=None) -> Reply:
        self.calls += 1
        self.seen.append((request.prompt.id, request.inputs))
        answer = self.respond(request.prompt.id, request.inputs, messages)
        text = answer if isinstance(answer, str) else json.dumps(answer)
        return Reply(text, sum(len(m["content"]) for m in messages) // 4, len(text) // 4, 0.0)


class NoCallBackend(Backend):
    """A backend that fails if called: proves a code path makes no judge call. Give it the
    name and model of the backend whose ledger entries it should find."""

    key_extra: dict | None = None  # set to the impersonated backend's, to find its ledger entries
    description: dict = {}

    def __init__(self, name: str = "no-call", model: str = "none") -> None:
        self.name, self.model = name, model

    async def complete(self, *args, **kwargs) -> Reply:
        raise AssertionError("a judge call was made where none may happen")


def _mentions_format(text: str) -> bool:
    low = text.lower()
    return "response_format" in low or "json_schema" in low or "structured" in low


def _with_schema_hint(messages: list[dict], schema: dict) -> list[dict]:
    hint = "Reply with one JSON object that validates against this JSON Schema:\n" + json.dumps(schema)
    out = [dict(m) for m in messages]
    if out and out[0]["role"] == "system":
        out[0]["content"] = out[0]["content"] + "\n\n" + hint
    else:
        out.insert(0, {"role": "system", "content": hint})
    return out
