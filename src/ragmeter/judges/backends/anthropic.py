"""``anthropic:<model>``: the Messages API wire protocol."""

from __future__ import annotations

import os
from typing import Any

from ragmeter.judges.backends import envelope
from ragmeter.judges.backends.base import Reply
from ragmeter.judges.backends.http import HTTPBackend
from ragmeter.judges.transport import JudgeConfigError


class AnthropicBackend(HTTPBackend):
    """``anthropic:<model>``: the Messages API, structured output through a forced tool call
    whose ``input_schema`` is the answer schema. Key from ``ANTHROPIC_API_KEY``."""

    name = "anthropic"
    KEY_SETTING = "ANTHROPIC_API_KEY"
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
