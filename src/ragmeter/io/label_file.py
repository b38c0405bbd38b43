"""The columnar reader: a JSON Lines file of plain label records, decoded (msgspec) a chunk of
whole lines at a time into columns of chunk-id codes (:mod:`ragmeter.core.columns`),
fingerprinted as it is read, without a ``Sample`` or a string per chunk id.

In a file without backslashes (every ``"`` then starts or ends a string, and a string's bytes
are its text), each ranked list is left as the file's bytes and read by counting
(:func:`_ranked_from_bytes`); anything else reads the ranked ids as strings. Either way the
ids are coded from their bytes (:class:`ragmeter.core.codes.IdCodes`), once per file.

A record qualifies when it is a JSON object with at most these fields: ``id`` (a non-blank
string), ``question``, ``answer``, ``reference`` (strings or null), ``retrieved`` (a list of
distinct non-blank string ids, or null), ``relevant`` (a list of distinct non-blank string
ids, an object of id -> finite number, or null) and ``answerable`` (``true``, as a run's
``samples.jsonl`` writes it), each line one object, the ids unique in the file; a ranked id may
also be given as ``{"id": "x"}``, as ``samples.jsonl`` writes them. Such records the general
reader reads as ``RowReader._plain_sample`` does; the samples built from the columns equal that
reader's, and the fingerprints equal :class:`ragmeter.io.dataset.Fingerprints`'s.

:func:`read_label_file` returns None for a file with any other record (an alias, a bad value,
a duplicate id, two objects on one line, a line that is not JSON, invalid UTF-8, ...), or when
msgspec is not installed: the caller then reads the whole file the general way, which names
what is wrong exactly as before.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from types import MappingProxyType
from typing import Any, overload

import numpy as np

from ragmeter.core.codes import IdCodes
from ragmeter.core.columns import LabelColumns, starts_of
from ragmeter.core.gc_pause import gc_paused
from ragmeter.core.sample import Chunk, Sample

try:
    import msgspec
except ImportError:  # pragma: no cover - a core dependency; without it every file takes the general reader
    msgspec = None  # type: ignore[assignment]
else:
    from ragmeter.io.label_prints import ranked_texts, update_digests

_BLANK_AFTER_FIRST = re.compile(rb"\n[ \t\r]*(?:\n|[ \t\r]\Z)")  # a blank line past the first
_BLANK_FIRST = re.compile(rb"[ \t\r]*(?:\n|\Z)")
_AFTER_BREAK = (b"\n\n", b"\n ", b"\n\t", b"\n\r")  # where a blank line past the first may start


if msgspec is not None:
    class _IdOnly(msgspec.Struct, forbid_unknown_fields=True, gc=False):
        """A ranked chunk given by its id alone, ``{"id": "x"}`` (as a run's samples.jsonl writes it)."""

        id: str

    class _Row(msgspec.Struct, forbid_unknown_fields=True, gc=False):
        """One plain label record as msgspec decodes it (types checked in C)."""

        id: str
        question: str | None = None
        retrieved: list[str | _IdOnly] | None = None
        relevant: list[str] | dict[str, float] | None = None
        answer: str | None = None
        reference: str | None = None
        answerable: bool = True  # (false: the general reader reads the file)

    class _RawRow(msgspec.Struct, forbid_unknown_fields=True, gc=False):
        """The same record with the ranked ids left as the file's bytes, read by array
        operations (:func:`_ranked_from_bytes`) instead of a string per id."""

        id: str
        question: str | None = None
        retrieved: msgspec.Raw = msgspec.Raw(b"null")
        relevant: list[str] | dict[str, float] | None = None
        answer: str | None = None
        reference: str | None = None
        answerable: bool = True

    _DECODER: Any = msgspec.json.Decoder(_Row)
    _RAW_DECODER: Any = msgspec.json.Decoder(_RawRow)


#: About this many bytes of whole lines are decoded at a time: the Python objects msgspec makes for
#: them (a string per chunk id) live only until their chunk is coded, so memory follows the arrays.
CHUNK_BYTES = 1 << 22


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
        update_digests(full, test, cols.ids, self.questions, ranked_texts(list(cols.retrieved), clean=self.clean),
                       list(cols.relevance), self.answers, self.references, clean=self.clean)

    def cut(self, start: int, stop: int) -> LabelFile:
        """Records ``start:stop`` (no fingerprints)."""
        if start == 0 and stop == len(self.columns):
            return self
        return LabelFile(self.columns.cut(start, stop), self.questions[start:stop],
                         _some(None if self.answers is None else self.answers[start:stop]),
                         _some(None if self.references is None else self.references[start:stop]), "", "",
                         clean=self.clean)

    @classmethod
    def joined(cls, parts: Sequence[LabelFile]) -> LabelFile:
        """The records of several parts end to end (no fingerprints)."""
        if len(parts) == 1:
            return parts[0]

        def column(get: Any) -> list[Any]:
            return list(chain.from_iterable(get(p) or [None] * len(p.columns) for p in parts))

        return LabelFile(LabelColumns.joined([p.columns for p in parts]), column(lambda p: p.questions),
                         _some(column(lambda p: p.answers)), _some(column(lambda p: p.references)), "", "",
                         clean=all(p.clean for p in parts))


def read_label_file(path: str | os.PathLike[str], *, fingerprints: bool = True) -> LabelFile | None:
    """The file's columns and fingerprints (without them, empty strings: a reader that shows the
    samples, not one that scores them), or None unless every record is a plain label record (and
    msgspec is installed)."""
    if msgspec is None:
        return None
    try:
        with open(path, "rb") as f:
            return _read(_whole_lines(f, CHUNK_BYTES), fingerprints=fingerprints)
    except OSError:
        return None


def decode_label_lines(raw: bytes) -> LabelFile | None:
    """:func:`read_label_file` on the file's bytes."""
    if msgspec is None:
        return None
    return _read(_whole_lines(io.BytesIO(raw), CHUNK_BYTES))


def decode_part(raw: bytes) -> LabelFile | None:
    """The columns of whole lines of a file (no byte order mark), without the fingerprints
    (empty strings); None unless every line is a plain label record or blank, ids unique."""
    if msgspec is None:
        return None
    return _decode(raw, IdCodes(), None)


def _read(chunks: Iterator[bytes], *, fingerprints: bool = True) -> LabelFile | None:
    """The whole file, a chunk of whole lines at a time: one vocabulary of chunk ids, both
    fingerprints fed as each chunk is read."""
    vocabulary = IdCodes()
    full, test = hashlib.sha256(), hashlib.sha256()
    parts = []
    for i, raw in enumerate(chunks):
        if i == 0 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]  # as read_text does
        part = _decode(raw, vocabulary, (full, test) if fingerprints else None)
        if part is None:
            return None
        parts.append(part)
    file = LabelFile.joined(parts) if parts else None
    if file is None or not file.columns.ids or (len(parts) > 1 and not _unique(list(file.columns.ids))):
        return None  # empty, or an id in two chunks
    if not fingerprints:
        return file
    return replace(file, fingerprint=full.hexdigest()[:16], testset_fingerprint=test.hexdigest()[:16])


def _whole_lines(f: Any, size: int) -> Iterator[bytes]:
    """The stream's bytes in pieces of about ``size``, each ending at a line end (the last one
    as the file ends)."""
    rest = b""
    while data := f.read(size):
        data = rest + data if rest else data
        cut = data.rfind(b"\n") + 1
        if cut:
            yield data[:cut]
        rest = data[cut:]
    if rest:
        yield rest


def _decode(raw: bytes, table: IdCodes, digests: tuple[Any, Any] | None) -> LabelFile | None:
    """The columns of whole lines (no byte order mark), chunk ids coded in ``table``, their
    texts fed to ``digests``; None unless every line is a plain label record or blank, ids unique."""
    if not raw.isascii():
        try:
            raw.decode("utf-8")  # Python's check, the one the general reader applies
        except UnicodeDecodeError:
            return None
    clean = b"\\" not in raw
    try:
        with gc_paused():  # many small objects, no cycles
            rows: list[Any] = (_RAW_DECODER if clean else _DECODER).decode_lines(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if _one_object_a_line(raw):  # the usual file: no blank line, a value per line
        if len(rows) != raw.count(b"\n"):
            return None
    elif len(rows) != _json_lines(raw) or not _no_value_spans_lines(raw):
        return None  # as json.loads line by line: one object on each line that is not blank
    if not all(r.answerable for r in rows):
        return None  # an unanswerable question: the general reader's
    ids = [r.id for r in rows]
    if not _unique(ids) or _any_blank(ids):
        return None
    ranked_of = _ranked_from_bytes(rows, table, digests is not None) if clean else _TYPED
    if ranked_of is _TYPED:  # the ranked ids as strings: escapes, or something the array reader leaves
        try:
            with gc_paused():
                rows = _DECODER.decode_lines(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        ranked_of = _ranked_from_strings(rows, table, clean, digests is not None)
    if ranked_of is None:
        return None
    ranked, lengths, texts = ranked_of
    if table.blank[ranked].any() or not _distinct_in_rows(ranked, lengths):
        return None
    given: list[Any] = [r.relevant for r in rows]
    listed: list[list[str]] = []
    relevance: list[dict[str, float]] = given
    if set(map(type, given)) != _DICT:  # labels as lists, or none: as dicts of grade 1
        listed = [rel for rel in given if type(rel) is list]
        relevance = [{} if rel is None else rel if type(rel) is dict else dict.fromkeys(rel, 1.0) for rel in given]
    if listed and not _distinct_ids(listed):
        return None
    keys = list(chain.from_iterable(relevance))
    labels = table.code_strings(keys)
    if labels is None:
        return None
    grades = np.fromiter(chain.from_iterable(map(dict.values, relevance)), dtype=np.float64, count=len(keys))
    questions = [r.question for r in rows]
    answers = _some([r.answer for r in rows])
    references = _some([r.reference for r in rows])
    if digests is not None:
        update_digests(*digests, ids, questions, texts, relevance, answers, references, clean=clean,
                       grades=set(grades.tolist()), keys="".join(keys))
    columns = LabelColumns(ids, table.vocabulary, ranked, starts_of(lengths), labels, grades,
                           starts_of(list(map(len, relevance))))
    return LabelFile(columns, questions, answers, references, "", "", clean=clean)


_TYPED: Any = object()  # read the ranked ids as strings instead
_DICT = {dict}
_Ranked = tuple[np.ndarray, "np.ndarray | list[int]", list[bytes]]


def _ranked_from_strings(rows: list[Any], table: IdCodes, clean: bool, texts: bool) -> _Ranked | None:
    """The ranked ids of typed rows (a string per id), coded, and their canonical JSON."""
    retrieved = [[] if r.retrieved is None else r.retrieved for r in rows]
    if any(type(x) is not str for ranked in retrieved for x in ranked):  # {"id": "x"} is "x"
        retrieved = [[x if type(x) is str else x.id for x in ranked] for ranked in retrieved]
    codes = table.code_strings(list(chain.from_iterable(retrieved)))
    if codes is None:
        return None
    return codes, list(map(len, retrieved)), ranked_texts(retrieved, clean=clean) if texts else []


_SPACED = re.compile(rb"[ \t\r][\[\],]|[\[\],][ \t\r]")  # whitespace beside a bracket or comma
_SPACE_RUN = re.compile(rb"[ \t\r]*([\[\],])[ \t\r]*")


def _ranked_from_bytes(rows: list[Any], table: IdCodes, texts: bool) -> _Ranked | Any:
    """The ranked ids of rows whose ``retrieved`` msgspec left as bytes (valid JSON; a file
    without backslashes, so every ``"`` starts or ends a string and a string's bytes are its
    text), read from the values end to end by counting: they are all arrays of strings, and
    no id holds a ``[``, ``]``, ``,`` or ``{``, exactly when (each value starting with ``[``)

    - the bytes hold no ``{`` and one ``[`` and one ``]`` per value (no object, no nesting);
    - a value with no string is ``[]``;
    - the commas number sum(k - 1) over the values with k > 0 strings (k = quotes / 2): a
      number or literal among the strings, or a comma inside one, would add a comma.

    The ids are then the bytes between each pair of quotes, coded from their bytes; and a
    record's canonical ranked JSON is its value's bytes rewritten (whitespace beside the
    brackets and commas dropped, each id put in ``[..,null,null]``). ``_TYPED`` for anything
    else (the typed decoder reads it, or refuses it)."""
    parts = [r.retrieved for r in rows]
    parts = [p if len(p) != 4 or bytes(p) != b"null" else b"[]" for p in parts]  # null: no ranked list
    joined = b"\n".join(parts)
    if b'{"id": "' in joined:  # chunks by id alone, as a run's samples.jsonl writes them: {"id": "x"} is "x"
        parts = [bytes(p).replace(b'{"id": "', b'"').replace(b'"}', b'"') for p in parts]
        joined = b"\n".join(parts)
        if b"}" in joined or b":" in joined:  # another key, or an id these bytes cannot tell
            return _TYPED
    n = len(parts)
    if b"{" in joined or joined.count(b"[") != n or joined.count(b"]") != n:
        return _TYPED
    buf = np.frombuffer(joined, dtype=np.uint8)
    sizes = np.fromiter(map(len, parts), dtype=np.int64, count=n)
    starts = np.cumsum(sizes + 1) - (sizes + 1)
    if n and not (buf[starts] == 0x5B).all():  # every value an array
        return _TYPED
    at = np.flatnonzero(buf == 0x22)
    first, size_of_ids = at[0::2] + 1, at[1::2] - at[0::2] - 1
    lengths = np.diff(np.searchsorted(at, np.append(starts, len(buf)))) // 2  # each value's quotes / 2
    filled = lengths > 0
    if (sizes[~filled] != 2).any() or joined.count(b",") != len(first) - int(np.count_nonzero(filled)):
        return _TYPED
    codes = table.code_spans(joined, first, size_of_ids)
    if codes is None:
        return None
    out: list[bytes] = []
    if texts:
        compact = joined.replace(b", ", b",")
        if b"\t" in compact or b"\r" in compact or (b" " in compact and _SPACED.search(compact)):
            compact = _SPACE_RUN.sub(rb"\1", joined)
        out = (compact.replace(b'["', b'[["').replace(b'"]', b'",null,null]]')
               .replace(b'","', b'",null,null],["').split(b"\n"))
    return codes, lengths, out


def _unique(ids: list[str]) -> bool:
    """Whether no id is there twice (their hashes sorted; a set only where two hashes are alike)."""
    hashes = np.fromiter(map(hash, ids), dtype=np.int64, count=len(ids))
    hashes.sort()
    return not bool((hashes[1:] == hashes[:-1]).any()) or len(set(ids)) == len(ids)


def _some(texts: list[str | None] | None) -> list[str | None] | None:
    """The texts, or None when none is given."""
    return texts if texts is not None and texts.count(None) != len(texts) else None


def _distinct_in_rows(codes: np.ndarray, lengths: np.ndarray | list[int]) -> bool:
    """Whether no code appears twice within one row (rows of these lengths, end to end): the
    (row, code) pairs sorted, no two alike."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(codes) <= 1 or lengths.max() <= 1:
        return True
    keys = np.repeat(np.arange(len(lengths), dtype=np.int64) << 31, lengths)
    keys |= codes
    keys.sort()
    return not bool((keys[1:] == keys[:-1]).any())


def _json_lines(raw: bytes) -> int:
    """How many lines the general reader decodes: ``\\n``-separated pieces (a trailing empty one
    is not a line) that hold more than JSON whitespace."""
    lines = raw.count(b"\n") + (not raw.endswith(b"\n"))
    if _BLANK_FIRST.match(raw) is None and (not any(pair in raw for pair in _AFTER_BREAK)  # the quick check
                                            or _BLANK_AFTER_FIRST.search(raw) is None):
        return lines
    pieces = raw.split(b"\n")
    if pieces[-1] == b"":
        pieces.pop()
    return sum(1 for p in pieces if p.strip(b" \t\r"))


def _one_object_a_line(raw: bytes) -> bool:
    """Whether every line starts with ``{`` and ends with ``}\\n`` (no blank line, no
    whitespace around them): then each line is one piece :func:`_json_lines` counts and
    :func:`_no_value_spans_lines` holds."""
    return raw[:1] == b"{" and raw.endswith(b"}\n") and raw.count(b"}\n{") == raw.count(b"\n") - 1


def _no_value_spans_lines(raw: bytes) -> bool:
    """Whether every line that is not blank starts with ``{`` and ends with ``}`` (JSON
    whitespace aside). Then no value msgspec decoded runs across a line break: inside an object
    a ``}`` is never followed by a ``{``. (With as many values as such lines, each line holds one.)"""
    if raw[:1] == b"{" and raw.endswith(b"}\n"):  # the usual file: no copy of it
        breaks = raw.count(b"\n") - 1
        if raw.count(b"}\n{") == breaks:
            return True
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

    __slots__ = ("_file", "_made", "_given", "_table")

    def __init__(self, file: LabelFile, chunks: dict[str, Chunk] | None = None) -> None:
        self._file = file
        self._made: list[Sample | None] = [None] * len(file.columns)
        # a Chunk made once per id and shared (a rows.ChunkTable given by the caller, to share it with
        # theirs); made when the first sample is built
        self._given = chunks
        self._table: dict[str, Chunk] | None = None

    def __len__(self) -> int:
        return len(self._made)

    @property
    def _chunks(self) -> dict[str, Chunk]:
        if self._table is None:
            from ragmeter.io.rows import ChunkTable  # only where samples are built

            given = self._given
            self._table = given if isinstance(given, ChunkTable) else ChunkTable()
        return self._table

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
                self._build_all()
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
            ranked = tuple(map(chunks.__getitem__, cols.ranked_ids(i)))
            made = self._made[i] = Sample(
                id=cols.ids[i], question=f.questions[i], retrieved=ranked,
                relevance=MappingProxyType(cols.labels_of(i)),
                answer=None if f.answers is None else f.answers[i],
                reference=None if f.references is None else f.references[i],
                metadata=MappingProxyType({}))
        return made

    def _build_all(self) -> None:
        """Every sample not built yet, from the columns read once (a ``Chunk`` per code, looked
        up once)."""
        f, made = self._file, self._made
        cols = f.columns
        chunk_of = list(map(self._chunks.__getitem__, cols.vocabulary))
        chunks = [chunk_of[c] for c in cols.ranked.tolist()]
        starts, label_starts = cols.ranked_starts.tolist(), cols.label_starts.tolist()
        names, grades = [cols.vocabulary[c] for c in cols.labels.tolist()], cols.grades.tolist()
        answers, references = f.answers, f.references
        for i, sid in enumerate(cols.ids):
            if made[i] is None:
                a, b = label_starts[i], label_starts[i + 1]
                made[i] = Sample(
                    id=sid, question=f.questions[i], retrieved=tuple(chunks[starts[i]:starts[i + 1]]),
                    relevance=MappingProxyType(dict(zip(names[a:b], grades[a:b]))),
                    answer=None if answers is None else answers[i],
                    reference=None if references is None else references[i], metadata=MappingProxyType({}))
