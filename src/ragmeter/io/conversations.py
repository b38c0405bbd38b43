"""Conversations: each turn becomes one sample, with the conversation so far attached.

Accepted record shapes (one conversation per record, or one turn per record for MTRAG):

- native: ``{"id": "c1", "turns": [{"question", "retrieved", "relevant", "context", "answer",
  "reference", "answerable", "standalone"}, ...]}``
- DeepEval ConversationalTestCase: ``{"id", "turns": [{"role": "user"|"assistant", "content",
  "retrieval_context": [...]}]}``
- Ragas MultiTurnSample: ``{"id", "user_input": [{"type": "human"|"ai", "content"}], "reference"}``
- MTRAG rows: ``{"conversation_id", "turn_id", "messages": [{"speaker"|"role", "text"|"content"}],
  "contexts": [{"document_id"|"id", "text"}], "response"|"answer", "answerability"}``

Turn samples get the id ``<conversation>#<turn>`` and metadata ``conversation``, ``turn``
(1-based), ``history`` (the earlier exchanges, for prompts that must resolve references)
and ``standalone`` when the data says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ragmeter.core.errors import InvalidInputError

USER, ASSISTANT = ("user", "human"), ("assistant", "ai", "agent")


def is_conversational(record: Any) -> bool:
    return isinstance(record, dict) and (isinstance(record.get("turns"), list)
                                         or isinstance(record.get("user_input"), list)
                                         or ("conversation_id" in record and "messages" in record))


def flatten(records: Iterable[tuple[int, Any]], file: str) -> list[tuple[int, dict]]:
    """Turn conversation records into single-turn records (line numbers kept for errors)."""
    out: list[tuple[int, dict]] = []
    mtrag: dict[str, list[tuple[int, dict]]] = {}
    for line, rec in records:
        if not is_conversational(rec):
            out.append((line, rec))
        elif "conversation_id" in rec:
            mtrag.setdefault(str(rec["conversation_id"]), []).append((line, rec))
        else:
            cid = rec.get("id")
            if cid is None:
                raise InvalidInputError("a conversation needs an id", file=file, line=line, field="id")
            with _shape_errors(file, line, "turns" if "turns" in rec else "user_input"):
                turns = _native_or_deepeval(rec, file, line) if "turns" in rec else _ragas(rec)
                out.extend((line, t) for t in _number(str(cid), turns))
    for cid, rows in mtrag.items():
        rows.sort(key=lambda r: _turn_key(r[1].get("turn_id")))
        turns = []
        for line, rec in rows:
            with _shape_errors(file, line, "messages"):
                turns.append(_mtrag_turn(rec, file, line))
        with _shape_errors(file, rows[0][0], "metadata"):
            out.extend((rows[i][0], t) for i, t in enumerate(_number(cid, turns)))
    return out


@contextmanager
def _shape_errors(file: str, line: int, field: str) -> Iterator[None]:
    """A conversation record whose parts have the wrong types (a turn that is not an object,
    a message list that is a number) is a located error, not a TypeError."""
    try:
        yield
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(f"a conversation part has the wrong type ({type(exc).__name__}: {exc})",
                                file=file, line=line, field=field,
                                fix="turns and messages are lists of objects; see the conversation formats in "
                                    "the README") from None


def _turn_key(value):
    try:
        return (0, int(value))
    except (TypeError, ValueError):
        return (1, str(value))


def _number(conversation: str, turns: list[dict]) -> list[dict]:
    history: list[str] = []
    out = []
    for i, t in enumerate(turns, start=1):
        meta = dict(t.pop("metadata", {}) or {})
        meta.update({"conversation": conversation, "turn": i, "history": "\n".join(history) or "(none)"})
        if "standalone" in t:
            meta["standalone"] = bool(t.pop("standalone"))
        t["id"] = f"{conversation}#{i}"
        t["metadata"] = meta
        history.append(f"User: {t.get('question') or ''}")
        if t.get("answer"):
            history.append(f"Assistant: {t['answer']}")
        out.append(t)
    return out


def _native_or_deepeval(rec: dict, file: str, line: int) -> list[dict]:
    turns = rec["turns"]
    if turns and all(isinstance(t, dict) and "role" in t for t in turns):  # DeepEval shape
        out: list[dict] = []
        for t in turns:
            role = str(t["role"]).lower()
            if role in USER:
                out.append({"question": t.get("content")})
            elif role in ASSISTANT:
                if not out:
                    raise InvalidInputError("the conversation starts with an assistant turn", file=file, line=line,
                                            field="turns")
                ctx = t.get("retrieval_context") or []
                out[-1]["answer"] = t.get("content")
                out[-1]["retrieved"] = [{"id": f"ctx-{k}", "text": c} for k, c in enumerate(ctx, start=1)]
        return out
    return [dict(t) for t in turns]


def _ragas(rec: dict) -> list[dict]:
    out: list[dict] = []
    for m in rec["user_input"]:
        kind = str(m.get("type", m.get("role", ""))).lower()
        if kind in USER:
            out.append({"question": m.get("content")})
        elif kind in ASSISTANT and out:
            out[-1]["answer"] = m.get("content")
    if out and rec.get("reference"):
        out[-1]["reference"] = rec["reference"]
    return out


def _mtrag_turn(rec: dict, file: str, line: int) -> dict:
    messages = rec.get("messages") or []
    users = [m for m in messages if str(m.get("speaker", m.get("role", ""))).lower() in USER]
    if not users:
        raise InvalidInputError("an MTRAG turn needs a user message", file=file, line=line, field="messages")
    last = users[-1]
    turn = {"question": last.get("text", last.get("content"))}
    contexts = rec.get("contexts") or []
    turn["retrieved"] = [{"id": str(c.get("document_id", c.get("id", f"ctx-{k}"))), "text": c.get("text")}
                         for k, c in enumerate(contexts, start=1)]
    answer = rec.get("response", rec.get("answer"))
    if answer is None and rec.get("targets"):
        answer = rec["targets"][0].get("text")
    if answer is not None:
        turn["answer"] = answer
    answerability = str(rec.get("answerability", "")).upper()
    if answerability:
        turn["answerable"] = answerability not in ("UNANSWERABLE", "FALSE")
    return turn
