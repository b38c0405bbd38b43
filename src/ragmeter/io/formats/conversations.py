"""Conversations: each turn becomes one sample, with the conversation so far attached.

Accepted record shapes (one conversation per record, or one task per record for MTRAG):

- native: ``{"id": "c1", "turns": [{"question", "retrieved", "relevant", "context", "answer",
  "reference", "answerable", "standalone"}, ...]}``
- DeepEval ConversationalTestCase: ``{"id"|"name", "turns": [{"role": "user"|"assistant", "content",
  "retrieval_context": [...]}], "scenario", "expected_outcome", ...}`` (the conversation's other
  fields go to each turn's metadata)
- Ragas MultiTurnSample: ``{"user_input": [{"type": "human"|"ai"|"tool", "content"}], "reference",
  ...}`` (an AI turn's answer is its last message with content; the reference is the last turn's)
- MTRAG tasks (``input`` speaker turns) and whole conversations (``messages``):
  :mod:`ragmeter.io.mtrag`.

Contexts given as texts get the content-hash ids of :func:`ragmeter.io.foreign.content_id`.
A conversation's id is its ``id`` (MTRAG: ``conversation_id``; DeepEval: ``name``); when no
conversation has one, each takes its position (1, 2, ...). Turn samples get the id
``<conversation>#<turn>`` and metadata ``conversation``, ``turn`` (1-based), ``history`` (the
earlier exchanges, for prompts that must resolve references) and ``standalone`` when the data
says so.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.io import mtrag
from ragmeter.io.foreign import content_id

USER, ASSISTANT = ("user", "human"), ("assistant", "ai", "agent")
#: Fields of a conversation record that are not its turns: kept in each turn's metadata.
_NOT_SHARED = frozenset({"id", "turns", "user_input", "reference", "metadata"})


def is_conversational(record: Any) -> bool:
    return isinstance(record, dict) and (isinstance(record.get("turns"), list)
                                         or isinstance(record.get("user_input"), list)
                                         or mtrag.is_task(record) or mtrag.is_conversation(record))


def _conversation_id(rec: dict) -> Any:
    return mtrag.conversation_id(rec) if mtrag.is_conversation(rec) else rec.get("id", rec.get("name"))


def flatten(records: Iterable[tuple[int, Any]], file: str, unit: str = "line") -> list[tuple[int, dict]]:
    """Turn conversation records into single-turn records (line numbers kept for errors;
    ``unit``: what they count, a ``line`` of a file or a ``row`` of data in memory)."""
    try:
        return _flatten(list(records), file)
    except InvalidInputError as exc:
        if unit != "row" or exc.line is None:
            raise
        raise InvalidInputError(exc.problem, file=exc.file, row=exc.line, record=exc.record, field=exc.field,
                                fix=exc.fix) from None


def _flatten(records: list[tuple[int, Any]], file: str) -> list[tuple[int, dict]]:
    tasks = [(line, rec) for line, rec in records if mtrag.is_task(rec)]
    by_line: dict[int, list[dict]] = {}
    for row_line, row in (mtrag.task_rows(tasks, file) if tasks else ()):
        by_line.setdefault(row_line, []).append(row)
    whole = [rec for _, rec in records if is_conversational(rec) and not mtrag.is_task(rec)]
    positional = bool(whole) and all(_conversation_id(rec) is None for rec in whole)
    out: list[tuple[int, dict]] = []
    position = 0
    for line, rec in records:
        if not is_conversational(rec):
            out.append((line, rec))
            continue
        if mtrag.is_task(rec):
            out.extend((line, row) for row in by_line.pop(line, []))  # one per prediction
            continue
        position += 1
        cid = str(position) if positional else _conversation_id(rec)
        if cid is None:
            raise InvalidInputError("a conversation needs an id (other conversations have one)",
                                    file=file, line=line, field="id",
                                    fix="give every conversation an id, or none of them")
        cid = str(cid)
        with _shape_errors(file, line, "messages" if mtrag.is_conversation(rec) else
                           "turns" if "turns" in rec else "user_input"):
            if mtrag.is_conversation(rec):
                out.extend((line, t) for t in mtrag.conversation_turns(rec, cid, file, line))
                continue
            turns = _native_or_deepeval(rec, file, line) if "turns" in rec else _ragas(rec)
            shared = {k: v for k, v in rec.items() if k not in _NOT_SHARED and v is not None}
            out.extend((line, t) for t in _number(cid, turns, {**shared, **dict(rec.get("metadata") or {})}))
    if positional:
        sys.stderr.write(f"ragmeter: {file}: no conversation has an id; each conversation's id is its position "
                         f"(1 to {position})\n")
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


def _number(conversation: str, turns: list[dict], shared: Mapping[str, Any]) -> list[dict]:
    history: list[str] = []
    out = []
    for i, t in enumerate(turns, start=1):
        meta = {**shared, **dict(t.pop("metadata", {}) or {})}
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
    return [dict(t) for t in turns]


def _ragas(rec: dict) -> list[dict]:
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
