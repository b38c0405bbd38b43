"""``openai:<model>``: the chat-completions wire protocol (OpenAI, vLLM, Ollama, llama.cpp
server, LM Studio, LiteLLM)."""

from __future__ import annotations

import json
import os
from typing import Any

from ragmeter.judges.backends import envelope
from ragmeter.judges.backends.base import Reply
from ragmeter.judges.backends.http import HTTPBackend
from ragmeter.judges.transport import JudgeConfigError


class OpenAIBackend(HTTPBackend):
    """``openai:<model>``: the chat-completions wire protocol (OpenAI, vLLM, Ollama, llama.cpp
    server, LM Studio, LiteLLM). Honours ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``. Asks for
    strict JSON-schema output; a server that rejects it gets JSON mode with the schema in
    the prompt."""

    name = "openai"
    KEY_SETTING = "OPENAI_API_KEY"
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
                payload["messages"] = with_schema_hint(messages, schema)
            else:
                payload["response_format"] = {"type": "json_schema",
                                              "json_schema": {"name": schema_name, "schema": schema, "strict": True}}
            response = await self._post("/chat/completions", payload, headers, timing)
            if response.status_code == 400 and not self.json_mode and mentions_format(response.text):
                self.json_mode = True  # the server has no structured output: fall back to JSON mode
                continue
            break
        if response.status_code == 400:
            raise JudgeConfigError(f"openai: the server rejected the request (HTTP 400): "
                                   f"{self._redact(response.text[:300])}")
        env = self._envelope(envelope.openai, response)
        return Reply(env.text, env.input_tokens, env.output_tokens, timing.get("wire_s", 0.0),
                     truncated=env.truncated, logprobs=env.logprobs, queue_s=timing.get("queue_s", 0.0))


def mentions_format(text: str) -> bool:
    """A 400 that says the server has no structured output (it names the response format)."""
    low = text.lower()
    return "response_format" in low or "json_schema" in low or "structured" in low


def with_schema_hint(messages: list[dict], schema: dict) -> list[dict]:
    """``messages`` with the schema stated in the system message (JSON mode takes no schema)."""
    hint = "Reply with one JSON object that validates against this JSON Schema:\n" + json.dumps(schema)
    out = [dict(m) for m in messages]
    if out and out[0]["role"] == "system":
        out[0]["content"] = out[0]["content"] + "\n\n" + hint
    else:
        out.insert(0, {"role": "system", "content": hint})
    return out
