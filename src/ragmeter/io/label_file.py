"""The columnar reader: a JSON Lines file of plain label records, decoded in one C call
(msgspec) into columns, fingerprinted without building a ``Sample`` per record.

A record qualifies when it is a JSON object with at most these fields: ``id`` (a non-blank
string), ``question``, ``answer``, ``reference`` (strings or null), ``retrieved`` (a list of
distinct non-blank string ids, or null) and ``relevant`` (a list of distinct non-blank string
ids, an object of id -> finite number, or null), each line one object, the ids unique in the
file. That is the shape ``RowReader._plain_sample`` accepts; the samples built from the columns
equal that reader's, and the fingerprints equal :class:`ragmeter.io.dataset.Fingerprints`'s.

:func:`read_label_file` returns None for a file with any other record (an alias, a bad value,
a duplicate id, two objects on one line, a line that is not JSON, invalid UTF-8, ...), or when
msgspec is not installed: the caller then reads the whole file the general way, which names
what is wrong exactly as before.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from types import MappingProxyType
from typing import Any, overload

from ragmeter.core.columns import LabelColumns
from ragmeter.core.gc_pause import gc_paused
from ragmeter.core.sample import Chunk, Sample
from ragmeter.io.rows import ChunkTable

try:
    import msgspec
except ImportError:  # pragma: no cover - a core dependency; without it every file takes the general reader
    msgspec = None  # type: ignore[assignment]
else:
    from ragmeter.io.label_prints import update_digests

_BLANK_AFTER_FIRST = re.compile(rb"\n[ \t\r]*(?:\n|[ \t\r]\Z)")  # a blank line past the first
_BLANK_FIRST = re.compile(rb"[ \t\r]*(?:\n|\Z)")


if msgspec is not None:
    class _Row(msgspec.Struct, forbid_unknown_fields=True, gc=False):
        """One plain label record as msgspec decodes it (types checked in C)."""

        id: str
        question: str | None = None
        retrieved: list[str] | None = None
        relevant: list[str] | dict[str, float] | None = None
        answer: str | None = None
        reference: str | None = None

    _DECODER: Any = msgspec.json.Decoder(_Row)


@dataclass(frozen=True)
class LabelFile:
    """A plain label file read into columns, with both fingerprints."""

    columns: LabelColumns
    questions: list[str | None]
    answers: list[str | None] | None  # None: no record gives one
    references: list[str | None] | None
    fingerprint: str
    testset_fingerprint: str
    clean: bool = False  # no string holds a character JSON escapes (the file has no backslash)

    def samples(self, chunks: dict[str, Chunk] | None = None) -> LazySamples:
        """The samples, built on first access; ``chunks``: a ``RowReader``'s ``chunks`` (id ->
        ``Chunk``, made on first lookup) to share one ``Chunk`` per id with it."""
        return LazySamples(self, chunks)

    def hash_into(self, full: Any, test: Any) -> None:
        """Feed both fingerprints' hashes (``hashlib.sha256`` objects) these records' texts."""
        cols = self.columns
        update_digests(full, test, cols.ids, self.questions, cols.retrieved, cols.relevance,  # type: ignore[arg-type]
                       self.answers, self.references, clean=self.clean)


def read_label_file(path: str | os.PathLike[str]) -> LabelFile | None:
    """The file's columns and fingerprints, or None unless every record is a plain label record
    (and msgspec is installed)."""
    if msgspec is None:
        return None
    try:
        raw = Path(path).read_bytes()
    except OSError:
        return None
    return decode_label_lines(raw)


def decode_label_lines(raw: bytes) -> LabelFile | None:
    """:func:`read_label_file` on the file's bytes."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # as read_text does
    part = decode_part(raw)
    if part is None or not part.columns.ids:
        return None
    full, test = hashlib.sha256(), hashlib.sha256()
    part.hash_into(full, test)
    return replace(part, fingerprint=full.hexdigest()[:16], testset_fingerprint=test.hexdigest()[:16])


def decode_part(raw: bytes) -> LabelFile | None:
    """The columns of whole lines of a file (no byte order mark), without the fingerprints
    (empty strings); None unless every line is a plain label record or blank, ids unique."""
    if msgspec is None:
        return None
    if not raw.isascii():
        try:
            raw.decode("utf-8")  # Python's check, the one the general reader applies
        except UnicodeDecodeError:
            return None
    try:
        with gc_paused():  # a million small objects, no cycles
            rows: list[_Row] = _DECODER.decode_lines(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if len(rows) != _json_lines(raw) or not _no_value_spans_lines(raw):
        return None  # as json.loads line by line: one object on each line that is not blank
    ids = [r.id for r in rows]
    if len(set(ids)) != len(ids) or _any_blank(ids):
        return None
    retrieved = [[] if r.retrieved is None else r.retrieved for r in rows]
    if not _distinct_ids(retrieved):
        return None
    relevance: list[dict[str, float]] = []
    listed: list[list[str]] = []
    for r in rows:
        rel = r.relevant
        if rel is None:
            relevance.append({})
        elif type(rel) is dict:
            relevance.append(rel)
        else:
            listed.append(rel)  # type: ignore[arg-type]
            relevance.append(dict.fromkeys(rel, 1.0))
    if listed and not _distinct_ids(listed):
        return None
    questions = [r.question for r in rows]
    answers = [r.answer for r in rows]
    references = [r.reference for r in rows]
    return LabelFile(LabelColumns(ids, retrieved, relevance), questions,
                     answers if any(a is not None for a in answers) else None,
                     references if any(a is not None for a in references) else None, "", "",
                     clean=b"\\" not in raw)


def _json_lines(raw: bytes) -> int:
    """How many lines the general reader decodes: ``\\n``-separated pieces (a trailing empty one
    is not a line) that hold more than JSON whitespace."""
    lines = raw.count(b"\n") + (not raw.endswith(b"\n"))
    if _BLANK_FIRST.match(raw) is None and _BLANK_AFTER_FIRST.search(raw) is None:
        return lines
    pieces = raw.split(b"\n")
    if pieces[-1] == b"":
        pieces.pop()
    return sum(1 for p in pieces if p.strip(b" \t\r"))


def _no_value_spans_lines(raw: bytes) -> bool:
    """Whether every line that is not blank starts with ``{`` and ends with ``}`` (JSON
    whitespace aside). Then no value msgspec decoded runs across a line break: inside an object
    a ``}`` is never followed by a ``{``. (With as many values as such lines, each line holds one.)"""
    body = raw.strip(b" \t\r\n")
    if body[:1] != b"{" or body[-1:] != b"}":
        return not body
    breaks = body.count(b"\n")
    if body.count(b"}\n{") == breaks or body.count(b"}\r\n{") == breaks:
        return True
    for line in body.split(b"\n"):
        text = line.strip(b" \t\r")
        if text and (text[:1] != b"{" or text[-1:] != b"}"):
            return False
    return True


def _any_blank(items: Iterable[str]) -> bool:
    """Whether some string is empty or whitespace only (``not s.strip()``: ``isspace`` is true
    for exactly the non-empty strings ``strip`` empties)."""
    items = items if isinstance(items, list) else list(items)
    return not all(items) or any(map(str.isspace, items))


def _distinct_ids(lists: list[list[str]]) -> bool:
    """Every list's ids distinct and none blank (what ``_distinct_ids`` of rows.py checks)."""
    if sum(map(len, map(set, lists))) != sum(map(len, lists)):
        return False
    return not _any_blank(chain.from_iterable(lists))


class LazySamples(Sequence[Sample]):
    """The samples of a :class:`LabelFile`, each built on first access (then kept), equal to
    what the general reader builds for the same record."""

    __slots__ = ("_file", "_made", "_chunks")

    def __init__(self, file: LabelFile, chunks: dict[str, Chunk] | None = None) -> None:
        self._file = file
        self._made: list[Sample | None] = [None] * len(file.columns)
        # a Chunk made once per id and shared (a rows.ChunkTable given by the caller, to share it with theirs)
        self._chunks: dict[str, Chunk] = chunks if isinstance(chunks, ChunkTable) else ChunkTable()

    def __len__(self) -> int:
        return len(self._made)

    @property
    def label_file(self) -> LabelFile:
        """The columns these samples are built from (to write them without building them)."""
        return self._file

    @overload
    def __getitem__(self, index: int) -> Sample: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Sample, ...]: ...

    def __getitem__(self, index: int | slice) -> Sample | tuple[Sample, ...]:
        if isinstance(index, slice):
            with gc_paused():
                return tuple(map(self._sample, range(*index.indices(len(self._made)))))
        if index < 0:
            index += len(self._made)
        if not 0 <= index < len(self._made):
            raise IndexError("sample index out of range")
        return self._sample(index)

    def __iter__(self) -> Iterator[Sample]:
        """Every sample, those not built yet built at once (with the collector paused: many
        small objects, no cycles)."""
        if None in self._made:
            with gc_paused():
                for i in range(len(self._made)):
                    self._sample(i)
        return iter(self._made)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LazySamples, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"<{len(self)} samples>"

    def _sample(self, i: int) -> Sample:
        made = self._made[i]
        if made is None:
            f, chunks = self._file, self._chunks
            cols = f.columns
            ranked = tuple(map(chunks.__getitem__, cols.retrieved[i]))
            made = self._made[i] = Sample(
                id=cols.ids[i], question=f.questions[i], retrieved=ranked,
                relevance=MappingProxyType(cols.relevance[i]),
                answer=None if f.answers is None else f.answers[i],
                reference=None if f.references is None else f.references[i],
                metadata=MappingProxyType({}))
        return made
