"""A conversation turn's history, stored once per conversation and referenced by each turn.

A turn's ``metadata["history"]`` is the conversation so far ("User: ...\\nAssistant: ..."),
which prompts read to resolve "it" and "the other one". Held as one string per turn, a
conversation of n turns holds n histories of up to n lines: quadratic in memory, in the
dataset fingerprint and in a run's ``samples.jsonl`` (a 1,000-turn conversation of 0.5 MB wrote
200 MB). :class:`TurnHistory` is the history of one turn as a view: the conversation's lines, one
list shared by every turn of it, and how many of them come before this turn. It behaves as the
string it stands for (``str()``, ``==``, ``in``, ``split``, ``startswith`` ...: a
``collections.UserString`` whose text is joined when asked for, never kept), so a prompt that
reads it gets the same text as before, and what stores it writes each line once
(:func:`new_lines`, the dataset fingerprint and the run store).
"""

from __future__ import annotations

import dataclasses
from collections import UserString
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from ragmeter.core.sample import Sample

NONE = "(none)"  # the history of a conversation's first turn


class TurnHistory(UserString):
    """The ``upto`` first ``lines`` of a conversation (``lines`` shared by all its turns, only ever
    appended to), as one string joined by newlines; ``"(none)"`` when there are none.

    >>> lines = ["User: Which router has 24 months?", "Assistant: The R2."]
    >>> first, second = TurnHistory(lines, 0), TurnHistory(lines, 2)
    >>> str(first), second == "User: Which router has 24 months?\\nAssistant: The R2."
    ('(none)', True)
    >>> second.split("\\n")[1], second.lines is first.lines
    ('Assistant: The R2.', True)
    """

    def __init__(self, lines: Sequence[str], upto: int) -> None:  # noqa: D107 -- no UserString.__init__: no copy
        if not 0 <= upto <= len(lines):
            raise ValueError(f"a history of {upto} lines out of {len(lines)}")
        self.lines = lines
        self.upto = upto

    @property  # UserString keeps its text in ``data``; this one joins it when asked
    def data(self) -> str:  # type: ignore[override]
        return "\n".join(self.lines[:self.upto]) or NONE

    def __reduce__(self) -> tuple[Any, ...]:
        return TurnHistory, (self.lines, self.upto)

    def __repr__(self) -> str:
        return f"TurnHistory({self.upto} of {len(self.lines)} lines)"


def plain(value: Any) -> Any:
    """A :class:`TurnHistory` as the string it stands for (what a prompt and a ledger key read);
    any other value as it is."""
    return str(value) if isinstance(value, TurnHistory) else value


class LineLedger:
    """Which lines of each conversation were already written (or hashed), so each is written once:
    :meth:`new_lines` gives a history's lines not written yet, and the key its conversation is
    written under. Keyed by the shared list itself (its id, the list kept alive here)."""

    def __init__(self) -> None:
        self._written: dict[int, tuple[Sequence[str], int, int]] = {}  # id(lines) -> (lines, key, count)

    def new_lines(self, history: TurnHistory) -> tuple[int, list[str]]:
        """(the conversation's key in this file: 0, 1, ...; its lines not written yet, up to
        ``history.upto``), and the lines are counted as written."""
        lines = history.lines
        entry = self._written.get(id(lines))
        if entry is None or entry[0] is not lines:
            entry = (lines, len(self._written), 0)
        _, key, count = entry
        fresh = list(lines[count:history.upto]) if history.upto > count else []
        self._written[id(lines)] = (lines, key, max(count, history.upto))
        return key, fresh


def from_written(keyed: dict[int, list[str]], value: Any) -> Any:
    """Read back what :func:`written` wrote: a :class:`TurnHistory` over the lines gathered so far
    for its conversation (``keyed``: key -> lines, filled as the file is read in order); any
    other value as it is."""
    if not (isinstance(value, dict) and set(value) == {"conversation", "new_lines", "lines_before"}):
        return value
    key, fresh, upto = value["conversation"], value["new_lines"], value["lines_before"]
    if not (isinstance(key, int) and isinstance(fresh, list) and isinstance(upto, int)
            and all(isinstance(x, str) for x in fresh)):
        return value
    lines = keyed.setdefault(key, [])
    lines.extend(fresh)
    return TurnHistory(lines, upto) if 0 <= upto <= len(lines) else value


def with_histories(samples: list[Sample]) -> list[Sample]:
    """``samples`` with each history a store wrote (:func:`written`, in a run's ``samples.jsonl``)
    read back as a :class:`TurnHistory`, in file order; the same list when there is none."""
    keyed: dict[int, list[str]] = {}
    out: list[Sample] | None = None
    for i, s in enumerate(samples):
        value = s.metadata.get("history") if s.metadata else None
        if not isinstance(value, dict):
            continue
        read = from_written(keyed, value)
        if read is not value:
            if out is None:
                out = list(samples)
            out[i] = dataclasses.replace(s, metadata=MappingProxyType({**s.metadata, "history": read}))
    return samples if out is None else out


def written(ledger: LineLedger, history: TurnHistory) -> dict[str, Any]:
    """How a store writes ``history``: its conversation's key, the lines no earlier line of the
    file wrote, and how many lines come before this turn (each line written once)."""
    key, fresh = ledger.new_lines(history)
    return {"conversation": key, "new_lines": fresh, "lines_before": history.upto}
