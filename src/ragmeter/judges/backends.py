"""Judge backends: OpenAI-compatible chat completions, Anthropic Messages, and scripted.

Each backend turns (messages, JSON schema) into one reply text plus token usage. API keys
are read from the environment or passed in, sent only in the request header, and never
logged, stored in the ledger or put in an error message.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import httpx

from ragmeter.core.network import http_options
from ragmeter.core.settings import DEFAULTS
from ragmeter.judges.transport import AdaptiveLimiter, JudgeConfigError, Limiter, RetryPolicy, send


@dataclass(frozen=True)
class Reply:
    text: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    truncated: bool = False
    logprobs: list | None = None  # OpenAI-style per-token logprobs, when asked for and offered


@dataclass
class Decoding:
    """Settings that can change a reply, so they are part of every ledger key."""

    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int = 2048

    def as_dict(self) -> dict:
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}


class Backend:
    name = "backend"
    model = ""
    base_url: str | None = None
    supports_logprobs = False
    key_extra: dict | None = None  # backend setup that changes replies (model file hash, recipe): in the ledger key
    description: dict = {}  # more of the backend's setup for provenance

    def rescore(self, request: Any, value: Any, logprobs: list | None) -> Any:
        """A stored judgment's value as this backend would decide it now (default: as stored)."""
        return value

    def refuses(self, prompt_id: str) -> str | None:
        """Why this backend does not serve a prompt (or a prompt part, ``<prompt id>:<field>``),
        or None when it does. The engine marks the metrics that read it NotComputed with the reason."""
        return None

    async def complete(self, messages: list[dict], schema: dict, schema_name: str, decoding: Decoding,
                       request: Any = None) -> Reply:
        """One reply; ``request`` (the JudgeRequest) is for scripted backends only."""
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


class _HTTPBackend(Backend):
    """An HTTP backend. ``limiter``: a shared concurrency limit and back-off (e.g. one for a
    whole cluster); by default the backend's own ``AdaptiveLimiter(concurrency)``."""

    def __init__(self, model: str, base_url: str, api_key: str | None, *, concurrency: int = DEFAULTS.concurrency,
                 policy: RetryPolicy | None = None, limiter: Limiter | None = None) -> None:
        self.model, self.base_url, self._key = model, base_url.rstrip("/"), api_key
        self.policy = policy or RetryPolicy()
        self.limiter: Limiter = limiter if limiter is not None else AdaptiveLimiter(concurrency)
        self.stats: dict[str, int] = {}
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.policy.timeout, **http_options())
        return self._client

    async def _post(self, path: str, payload: dict, headers: dict) -> httpx.Response:
        return await send(lambda: self.client.post(self.base_url + path, json=payload, headers=headers),
                          limiter=self.limiter, policy=self.policy, backend=self.name, stats=self.stats)

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

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
        start = time.perf_counter()
        for _ in range(2):
            if self.json_mode:
                payload["response_format"] = {"type": "json_object"}
                payload["messages"] = _with_schema_hint(messages, schema)
            else:
                payload["response_format"] = {"type": "json_schema",
                                              "json_schema": {"name": schema_name, "schema": schema, "strict": True}}
            response = await self._post("/chat/completions", payload, headers)
            if response.status_code == 400 and not self.json_mode and _mentions_format(response.text):
                self.json_mode = True  # the server has no structured output: fall back to JSON mode
                continue
            break
        if response.status_code == 400:
            raise JudgeConfigError(f"openai: the server rejected the request (HTTP 400): "
                                   f"{self._redact(response.text[:300])}")
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError):
            return Reply(self._redact(response.text[:2000]), 0, 0, time.perf_counter() - start)
        usage = data.get("usage") or {}
        logprobs = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), dict) else None
        return Reply(text, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                     time.perf_counter() - start, truncated=choice.get("finish_reason") == "length",
                     logprobs=logprobs)


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
        start = time.perf_counter()
        response = await self._post("/v1/messages", payload, headers)
        if response.status_code == 400:
            raise JudgeConfigError(f"anthropic: the server rejected the request (HTTP 400): "
                                   f"{self._redact(response.text[:300])}")
        try:
            data = response.json()
            blocks = data["content"]
            tool = next((b for b in blocks if b.get("type") == "tool_use"), None)
            text = json.dumps(tool["input"]) if tool else "".join(b.get("text", "") for b in blocks)
        except (ValueError, KeyError, TypeError):
            return Reply(self._redact(response.text[:2000]), 0, 0, time.perf_counter() - start)
        usage = data.get("usage") or {}
        return Reply(text, int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0),
                     time.perf_counter() - start, truncated=data.get("stop_reason") == "max_tokens")


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
