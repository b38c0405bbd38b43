"""DeepEval (``LLMTestCase``, ``ConversationalTestCase``, ``EvaluationDataset``), as rows or objects.

- A test case: ``input``, ``actual_output``, ``expected_output``, ``retrieval_context`` (texts,
  rank order) and ``context`` (the ideal context, texts). In a row with ``retrieval_context``,
  ``context`` is DeepEval's; otherwise it is ragmeter's own field (the chunk ids that reached
  the prompt).
- A conversation (``ConversationalTestCase``): ``{"id"|"name", "turns": [{"role": "user" |
  "assistant", "content", "retrieval_context": [...]}], "scenario", "expected_outcome", ...}``
  (the conversation's other fields go to each turn's metadata; an assistant turn's other fields
  to its turn's, as ``assistant_<field>``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.formats.base import (
    ASSISTANT,
    RELEVANT_TEXTS,
    RETRIEVED_TEXTS,
    USER,
    ContextField,
    Conversation,
    Format,
    content_id,
)


def is_conversation(record: Mapping[str, Any]) -> bool:
    turns = record.get("turns")
    return isinstance(turns, list) and bool(turns) and all(isinstance(t, dict) and "role" in t for t in turns)


def turns(rec: Mapping[str, Any], cid: str, file: str, line: int, aliases: Mapping[str, str]) -> list[dict]:
    out: list[dict] = []
    for t in rec["turns"]:
        role = str(t["role"]).lower()
        extra = {k: v for k, v in t.items() if k not in ("role", "content", "retrieval_context") and v is not None}
        if role in USER:
            out.append({"question": t.get("content"), **({"metadata": extra} if extra else {})})
        elif role in ASSISTANT:
            if not out:
                raise InvalidInputError("the conversation starts with an assistant turn", file=file, line=line,
                                        field="turns")
            ctx = t.get("retrieval_context") or []
            out[-1]["answer"] = t.get("content")
            out[-1]["retrieved"] = [{"id": content_id(c), "text": c} for c in ctx]
            if extra:
                out[-1]["metadata"] = {**out[-1].get("metadata", {}), **{f"assistant_{k}": v
                                                                         for k, v in extra.items()}}
    return out


FORMAT = Format(
    name="deepeval",
    tried="DeepEval's (input, actual_output, retrieval_context, expected_output)",
    accepted=("DeepEval test cases (objects with input, actual_output, retrieval_context, ...)",),
    aliases={"input": "question", "actual_output": "answer", "expected_output": "reference"},
    contexts={"retrieval_context": ContextField(RETRIEVED_TEXTS),
              "context": ContextField(RELEVANT_TEXTS, beside="retrieval_context")},
    holders={"test_cases": "EvaluationDataset"},
    conversations=(Conversation("turns", is_conversation, turns, specificity=2),),
)
