"""Ragas (``SingleTurnSample``, ``MultiTurnSample``, ``EvaluationDataset``), as rows or objects.

- A single turn: ``user_input``, ``retrieved_contexts`` (texts, rank order), ``response``,
  ``reference``, ``reference_contexts`` (texts); ``retrieved_context_ids`` /
  ``reference_context_ids`` when the data has ids. The older names: ``question``,
  ``contexts``, ``answer``, ``ground_truth`` / ``ground_truths`` (joined by newlines).
- A conversation (``MultiTurnSample``): ``{"user_input": [{"type": "human"|"ai"|"tool",
  "content"}], "reference", ...}``: an AI turn's answer is its last message with content (after
  a tool call, the last AI message is the answer; its tool calls and the tool messages go to
  the turn's metadata); the reference is the last turn's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.io.formats.base import (
    ASSISTANT,
    REFERENCE_LINES,
    RELEVANT_IDS,
    RELEVANT_TEXTS,
    RETRIEVED_IDS,
    RETRIEVED_TEXTS,
    USER,
    ContextField,
    Conversation,
    Format,
)


def is_conversation(record: Mapping[str, Any]) -> bool:
    return isinstance(record.get("user_input"), list)


def turns(rec: Mapping[str, Any], cid: str, file: str, line: int, aliases: Mapping[str, str]) -> list[dict]:
    out: list[dict] = []
    for m in rec["user_input"]:
        kind = str(m.get("type", m.get("role", ""))).lower()
        if kind in USER:
            out.append({"question": m.get("content")})
        elif kind in ASSISTANT and out:
            if m.get("content"):
                out[-1]["answer"] = m["content"]  # after a tool call, the last AI message is the answer
            if m.get("tool_calls"):
                out[-1].setdefault("metadata", {}).setdefault("tool_calls", []).extend(m["tool_calls"])
        elif kind == "tool" and out:
            out[-1].setdefault("metadata", {}).setdefault("tool_messages", []).append(m.get("content"))
    if out and rec.get("reference"):
        out[-1]["reference"] = rec["reference"]
    return out


FORMAT = Format(
    name="ragas",
    tried="Ragas' (user_input, retrieved_contexts, response, reference)",
    accepted=("Ragas samples or an EvaluationDataset",),
    aliases={"user_input": "question", "response": "answer", "ground_truth": "reference"},
    contexts={"retrieved_contexts": ContextField(RETRIEVED_TEXTS), "contexts": ContextField(RETRIEVED_TEXTS),
              "retrieved_context_ids": ContextField(RETRIEVED_IDS),
              "reference_context_ids": ContextField(RELEVANT_IDS),
              "reference_contexts": ContextField(RELEVANT_TEXTS), "ground_truths": ContextField(REFERENCE_LINES)},
    holders={"samples": "EvaluationDataset"},
    conversations=(Conversation("user_input", is_conversation, turns),),
)
