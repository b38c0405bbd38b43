"""What an agent run did: the tool calls it made and the tools it declares.

A :class:`ToolCall` is one call, in the order the run made it, with its arguments (decoded
JSON) and its result when the trace has one. Arguments that are not valid JSON are kept as
``raw_arguments`` with ``arguments=None``: the model really sent them, so they are
evidence, not a reading error. :class:`AgentRun` holds one case: its question and answer,
its calls (``None``: the trace recorded none) and its declared tools (``None``: not given).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ragmeter.core.frozen import reduce_frozen


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: Mapping[str, Any] | None  # None: the arguments were not a JSON object (see raw_arguments)
    result: Any = None
    id: str | None = None
    index: int = 0  # position in the run, from 0
    raw_arguments: str | None = None
    has_result: bool = False

    def describe(self) -> str:
        if self.arguments is None:
            args = repr((self.raw_arguments or "")[:80])
        else:
            args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return f"#{self.index + 1} {self.name}({args[:160]})"

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "id": self.id,
                "arguments": None if self.arguments is None else dict(self.arguments),
                "raw_arguments": self.raw_arguments, "result": self.result if self.has_result else None}


@dataclass(frozen=True)
class ToolSpec:
    """A tool the agent declares (the ``tools`` it offers its model)."""

    name: str
    description: str | None = None
    parameters: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class AgentRun:
    """One case: what was asked and answered, and what the run did."""

    id: str
    question: str | None = None
    answer: str | None = None
    calls: tuple[ToolCall, ...] | None = None  # None: no calls recorded
    tools: tuple[ToolSpec, ...] | None = None  # None: the agent's tools were not given
    criteria: tuple[Any, ...] = ()  # per-case criteria (ragmeter.actions.criteria.ActionCriterion)
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    calls_complete: bool = False  # the trace is known to hold every call (an empty list then means "none made")

    __reduce__ = reduce_frozen  # metadata (read-only) pickles as a dict

    @property
    def declared(self) -> frozenset[str] | None:
        return None if self.tools is None else frozenset(t.name for t in self.tools)

    def calls_to(self, tool: str) -> list[ToolCall]:
        return [c for c in self.calls or () if c.name == tool]
