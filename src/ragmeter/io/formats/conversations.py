"""Records that hold several samples, read into one record per sample: each turn of a
conversation becomes one sample, with the conversation so far attached; each task (MTRAG's)
one per prediction.

The shapes are the formats' (:mod:`ragmeter.io.formats.registry`): ragmeter's ``turns``,
DeepEval's turns with roles, Ragas' ``user_input`` messages, MTRAG's tasks (``input`` speaker
turns) and conversations (``messages``). A conversation's id is its ``id`` (MTRAG:
``conversation_id``; DeepEval: ``name``); when no conversation has one, each takes its position
(1, 2, ...). Turn samples get the id ``<conversation>#<turn>`` and metadata ``conversation``,
``turn`` (1-based), ``history`` (the earlier exchanges, for prompts that must resolve
references: a :class:`~ragmeter.core.history.TurnHistory`, the conversation's lines stored once
and referenced by each turn, read as the string) and ``standalone`` when the data says so.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.history import TurnHistory
from ragmeter.io.formats.registry import ALIASES, TASKS, conversation_of, is_conversational, is_task

#: Fields of a conversation record that are not its turns: kept in each turn's metadata.
_NOT_SHARED = frozenset({"id", "turns", "user_input", "reference", "metadata"})


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
    by_line: dict[int, list[dict]] = {}
    for tasks in TASKS:
        mine: list[tuple[int, Mapping[str, Any]]] = [(line, rec) for line, rec in records
                                                     if isinstance(rec, dict) and tasks.recognises(rec)]
        for row_line, row in (tasks.rows(mine, file, ALIASES) if mine else ()):
            by_line.setdefault(row_line, []).append(row)
    whole = [(rec, shape) for _, rec in records if not is_task(rec) and (shape := conversation_of(rec)) is not None]
    positional = bool(whole) and all(shape.conversation_id(rec) is None for rec, shape in whole)
    out: list[tuple[int, dict]] = []
    position = 0
    for line, rec in records:
        if not is_conversational(rec):
            out.append((line, rec))
            continue
        if is_task(rec):
            out.extend((line, row) for row in by_line.pop(line, []))  # one per prediction
            continue
        shape = conversation_of(rec)
        assert shape is not None  # conversational, and not a task
        position += 1
        cid = str(position) if positional else shape.conversation_id(rec)
        if cid is None:
            raise InvalidInputError("a conversation needs an id (other conversations have one)",
                                    file=file, line=line, field="id",
                                    fix="give every conversation an id, or none of them")
        cid = str(cid)
        with _shape_errors(file, line, shape.field):
            turns = shape.turns(rec, cid, file, line, ALIASES)
            if not shape.numbered:
                out.extend((line, t) for t in turns)
                continue
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
    history: list[str] = []  # the conversation's lines, one list shared by every turn's history
    out = []
    for i, t in enumerate(turns, start=1):
        meta = {**shared, **dict(t.pop("metadata", {}) or {})}
        meta.update({"conversation": conversation, "turn": i, "history": TurnHistory(history, len(history))})
        if "standalone" in t:
            meta["standalone"] = bool(t.pop("standalone"))
        t["id"] = f"{conversation}#{i}"
        t["metadata"] = meta
        history.append(f"User: {t.get('question') or ''}")
        if t.get("answer"):
            history.append(f"Assistant: {t['answer']}")
        out.append(t)
    return out
