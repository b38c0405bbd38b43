"""``results.jsonl`` read in columns: the ids and, per measure, a status code and a value per
sample (:class:`ragmeter.core.result_columns.ResultColumns`), decoded by msgspec a block of whole
lines at a time into typed rows (types checked in C) that are turned into arrays and dropped; the
rows themselves (:class:`RunRows`) are read from the file again only when something asks for
them, a line at a time.

The columns are the rows :func:`ragmeter.runs.store.load_run` has always read, checked the same
way (:mod:`ragmeter.runs.run_check`): a status of ``scored`` with a finite number as its value,
``not_computed`` or ``failed`` without one; in a complete run no id twice and per measure the
counts ``summary.json`` gives. :func:`read_columns` returns None for any file it cannot vouch
for that way (a line that is not one JSON object, a blank line, a value that is not a number, a
status it does not know, an id twice, counts that differ, invalid UTF-8, ...): the caller then
reads the file line by line, as before, which names the file, line, record and field.

Measured on a 500,000-sample, five-measure run (150 MB): about 1.5 s and 60 MB of columns,
where the rows took 30 s and 1.5 GB.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.result_columns import ABSENT, STATUS_CODES, MeasureColumn, ResultColumns
from ragmeter.runs.run_check import FIX

try:
    import msgspec
except ImportError:  # pragma: no cover - a core dependency; without it every run takes the row reader
    msgspec = None  # type: ignore[assignment]

BLOCK_BYTES = 8 * 2**20  # the lines decoded at once

if msgspec is not None:
    class _Cell(msgspec.Struct, gc=False):
        status: Literal["scored", "not_computed", "failed"]  # another: the row reader names it
        value: float | None = None

    class _Names(msgspec.Struct, gc=False):
        metrics: dict[str, msgspec.Raw]

    _FIRST = msgspec.json.Decoder(_Names)  # a row's measure names, its cells left as bytes


class RunRows(Sequence[dict]):
    """The rows of ``results.jsonl`` (each as ``json.loads`` gives it), read from the file when asked
    for, a line at a time: ``starts`` holds each row's first byte and the end of the last. A file
    changed since it was read is an error, never rows that disagree with the columns."""

    def __init__(self, path: Path, starts: np.ndarray, stamp: tuple[int, int]) -> None:
        self._path, self._starts, self._stamp = path, starts, stamp

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __eq__(self, other: object) -> bool:
        """Equal to a list (or rows read the same way) of the same rows, as a list is."""
        if not isinstance(other, (list, RunRows)):
            return NotImplemented
        return len(self) == len(other) and all(x == y for x, y in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # a list's equality, a list's (lack of) hash

    @overload
    def __getitem__(self, i: int) -> dict: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict]: ...

    def __getitem__(self, i: int | slice) -> dict | list[dict]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError("row index out of range")
        i %= len(self)
        start, stop = int(self._starts[i]), int(self._starts[i + 1])
        with self._open() as f:
            return json.loads(os.pread(f.fileno(), stop - start, start))

    def __iter__(self) -> Iterator[dict]:
        starts = self._starts
        with self._open() as f:
            first = 0
            while first < len(self):
                last = max(first + 1, int(np.searchsorted(starts, starts[first] + BLOCK_BYTES, side="right")) - 1)
                last = min(last, len(self))
                block = os.pread(f.fileno(), int(starts[last] - starts[first]), int(starts[first]))
                if len(block) != starts[last] - starts[first]:
                    raise self._changed()
                lines = block.split(b"\n")
                yield from map(json.loads, lines[:-1] if block.endswith(b"\n") else lines)
                first = last

    def _open(self):
        f = open(self._path, "rb")
        st = os.fstat(f.fileno())
        if (st.st_size, st.st_mtime_ns) != self._stamp:
            f.close()
            raise self._changed()
        return f

    def _changed(self) -> InvalidInputError:
        return InvalidInputError("the run file changed after it was read", file=str(self._path), fix=FIX)


def read_columns(path: Path, *, complete: bool) -> tuple[ResultColumns, RunRows] | None:
    """The columns of ``results.jsonl`` and its rows, or None when the file needs the row reader
    (see the module). A run that is not complete may end in a torn line (killed mid-append),
    which is left out."""
    if msgspec is None:
        return None
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            raw = f.read()
    except OSError:
        return None
    if not complete and raw and not raw.endswith(b"\n"):
        raw = raw[: raw.rfind(b"\n") + 1]  # the last line was being written
    starts = _line_starts(raw)
    if starts is None:
        return None
    try:
        columns = _decode(raw, len(starts) - 1)
    except (msgspec.DecodeError, _Refused):
        return None
    return columns, RunRows(path, starts, (st.st_size, st.st_mtime_ns))


def _line_starts(raw: bytes) -> np.ndarray | None:
    """Each line's first byte and the end of the last, when every line starts with ``{`` and ends
    with ``}`` (the file ends in a newline or not); None otherwise (a blank line, a line that
    starts or ends in white space: the row reader reads those). Then no JSON object can span
    two lines (after a ``}`` inside an object comes ``,``, ``}`` or ``]``, never ``{``), so
    each line holds as many rows as it holds objects, one when the counts agree."""
    if not raw:
        return np.zeros(1, dtype=np.int64)
    data = np.frombuffer(raw, dtype=np.uint8)
    ends = np.flatnonzero(data == 10)  # each newline
    if not raw.endswith(b"\n"):
        ends = np.append(ends, len(raw))
    starts = np.concatenate(([0], ends[:-1] + 1)).astype(np.int64)
    if (data[starts] != ord("{")).any() or (data[ends - 1] != ord("}")).any():
        return None
    return np.append(starts, min(len(raw), int(ends[-1]) + 1))


class _Refused(Exception):
    """A row the row reader must name (a value or a count the checks refuse)."""


_SCORED, _ABSENT_CELL = "scored", None
_UNNAMEABLE = re.compile(r'["\\\x00-\x1f]')
_CODES = {**STATUS_CODES}


@lru_cache(maxsize=16)
def _decoder(names: tuple[str, ...]) -> msgspec.json.Decoder:
    """A decoder of rows that hold exactly these measures or fewer (any other is an error). A name
    msgspec cannot take as a field's (a quote, a backslash, a control character) is left to the
    line reader."""
    if any(_UNNAMEABLE.search(name) for name in names):
        raise _Refused
    metrics = msgspec.defstruct("Metrics", [(f"m{i}", _Cell | None, None) for i in range(len(names))],
                                rename={f"m{i}": name for i, name in enumerate(names)},
                                forbid_unknown_fields=True, gc=False)
    row = msgspec.defstruct("Row", [("id", str), ("metrics", metrics)], gc=False)
    return msgspec.json.Decoder(row)


def _decode(raw: bytes, lines: int) -> ResultColumns:
    """Each block of whole lines decoded, its rows turned into columns and dropped."""
    ids: list[str] = []
    parts: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    done, pos = 0, 0
    while pos < len(raw):
        end = raw.rfind(b"\n", pos, pos + BLOCK_BYTES) + 1 if pos + BLOCK_BYTES < len(raw) else len(raw)
        if end <= pos:
            end = raw.find(b"\n", pos + BLOCK_BYTES) + 1 or len(raw)
        block = raw[pos:end]
        pos = end
        names = tuple(_FIRST.decode(block[:block.find(b"\n") + 1 or len(block)]).metrics)
        try:
            rows = _decoder(names).decode_lines(block)
        except msgspec.ValidationError:  # another measure further on: the block's every name
            names = tuple(dict.fromkeys(n for r in _FIRST.decode_lines(block) for n in r.metrics))
            rows = _decoder(names).decode_lines(block)
        ids.extend(map(attrgetter("id"), rows))
        held = list(map(attrgetter("metrics"), rows))
        for i, name in enumerate(names):
            cells = list(map(attrgetter(f"m{i}"), held))
            parts.setdefault(name, [_absent(done)]).append(_cell_columns(cells))
        for name in parts.keys() - set(names):
            parts[name].append(_absent(len(rows)))
        done += len(rows)
    if done != lines:
        raise _Refused  # a line holds two objects
    measures = {}
    for name, got in parts.items():
        status = np.concatenate([st for st, _ in got])
        measures[name] = MeasureColumn(status, np.concatenate([v for _, v in got]), status == 0)
    return ResultColumns(ids, measures)


def _absent(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full(n, ABSENT, dtype=np.int8), np.full(n, np.nan)


def _cell_columns(cells: list) -> tuple[np.ndarray, np.ndarray]:
    """One measure's cells of a block (None: a row without it) as status codes and values; a
    value where none belongs, or none (or NaN or infinity) where one does, is refused."""
    missing = cells.count(_ABSENT_CELL)
    present = [c for c in cells if c is not None] if missing else cells
    statuses = list(map(attrgetter("status"), present))
    if statuses.count(_SCORED) == len(statuses):
        values = _numbers(present)
        status = np.zeros(len(present), dtype=np.int8)
    else:
        values = np.array(list(map(attrgetter("value"), present)), dtype=np.float64)  # None -> NaN
        status = np.fromiter(map(_CODES.__getitem__, statuses), dtype=np.int8, count=len(statuses))
        if not np.isnan(values[status != 0]).all():
            raise _Refused
    if not np.isfinite(values[status == 0]).all():
        raise _Refused
    if missing:
        full_status, full_values = _absent(len(cells))
        at = np.fromiter((c is not None for c in cells), dtype=bool, count=len(cells))
        full_status[at], full_values[at] = status, values
        return full_status, full_values
    return status, values


def _numbers(cells: list) -> np.ndarray:
    """The cells' values as floats, read straight into the array (a None, which a scored cell must
    not have, makes it NaN, which the caller refuses)."""
    try:
        return np.fromiter(map(attrgetter("value"), cells), dtype=np.float64, count=len(cells))
    except TypeError:
        return np.array(list(map(attrgetter("value"), cells)), dtype=np.float64)


def agrees(columns: ResultColumns, summary: dict[str, Any]) -> bool:
    """A complete run's columns against its summary: no id twice, no measure the summary does not
    list, per measure the counts it gives (else the row reader says which)."""
    if len(set(columns.ids)) != len(columns.ids) or columns.measures.keys() - summary.keys():
        return False
    for name, m in summary.items():
        if not isinstance(m, dict) or columns.counts(name) != {s: m.get(s) for s in STATUS_CODES}:
            return False
    return True
