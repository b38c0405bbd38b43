"""Backends that call no model, for tests and dry runs: :class:`ScriptedBackend` answers from a
function, :class:`NoCallBackend` fails if called."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragmeter.judges.backends.base import Backend, Reply


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
