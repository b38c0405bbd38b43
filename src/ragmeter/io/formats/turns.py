"""ragmeter's conversations: ``{"id": "c1", "turns": [{"question", "retrieved", "relevant",
"context", "answer", "reference", "answerable", "standalone"}, ...]}``, one sample per turn
(the registry numbers them: ids ``<conversation>#<turn>``, the history so far, the
conversation's other fields in each turn's metadata).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.io.formats.base import Conversation, Format


def is_conversation(record: Mapping[str, Any]) -> bool:
    return isinstance(record.get("turns"), list)


def turns(rec: Mapping[str, Any], cid: str, file: str, line: int, aliases: Mapping[str, str]) -> list[dict]:
    return [dict(t) for t in rec["turns"]]


FORMAT = Format(
    name="conversation",
    tried="a conversation (turns; Ragas user_input messages; DeepEval turns with roles)",
    conversations=(Conversation("turns", is_conversation, turns, specificity=1),),
)
