"""Turn one decoded record (a dict from JSONL or CSV) into a validated ``Sample``.

Every problem raises ``InvalidInputError`` naming the file, line, sample id, field and fix.
Nothing is coerced silently except integer ids, which become their decimal string
(ids are strings: "01" and "1" stay different).
"""

from __future__ import annotations

import difflib
import math
import sys
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Chunk, Sample
from ragmeter.io.formats.base import FIELDS
from ragmeter.io.formats.registry import ALIASES, FORMATS_TRIED, is_conversational, native_fields

#: A dataset record gives at least one of these; a record with only an id and a text is a corpus's.
CONTENT_FIELDS = frozenset({"question", "retrieved", "relevant", "context", "answer", "reference"})

def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


ID_NAMES = ("id", *(k for k, v in ALIASES.items() if v == "id"))


def has_ids(records: list[tuple[int, Any]]) -> bool:
    """Whether any record names its id (then every record must)."""
    return any(isinstance(r, Mapping) and any(r.get(n) is not None for n in ID_NAMES) for _, r in records)


class RowReader:
    """Validates records from one source, remembering ids to refuse duplicates.

    ``unit``: what the numbers given to :meth:`sample` count (``"line"`` of a file, or
    ``"row"`` of an in-memory table). ``default_ids``: a record without an id takes its
    1-based position among the records (used when no record has one: Ragas and DeepEval
    data carry none); ``defaulted`` counts them.
    """

    def __init__(self, file: str, *, track_ids: bool = True, unit: str = "line", default_ids: bool = False) -> None:
        self.file, self.unit = file, unit
        self.track_ids = track_ids  # a streaming reader checks duplicate ids in a separate pass
        self.default_ids = default_ids
        self.seen: dict[str, int] = {}
        self.position = 0
        self.defaulted = 0
        self.chunks: dict[str, Chunk] = ChunkTable()  # a chunk given by id alone, made once and shared (immutable)

    def sample(self, row: Mapping[str, Any], line: int) -> Sample:
        made = self._plain_sample(row, line)
        if made is not None:
            return made
        self.position += 1
        err = _ErrorAt(self.file, line, unit=self.unit)
        if not isinstance(row, Mapping):
            raise err(f"each record must be a JSON object, got {_type_name(row)}",
                      fix='write one object per line, e.g. {"id": "q1", ...}')
        if is_conversational(row):  # never here from load_dataset, which reads them turn by turn first
            raise err("a conversation (turns, Ragas user_input messages, or an MTRAG task or conversation) "
                      "becomes one sample per turn only when the file is read whole",
                      fix="drop --block (a streamed file holds one sample per line)")
        try:
            row = native_fields(row)
        except InvalidInputError as exc:
            raise err(exc.problem, field=exc.field, fix=exc.fix) from None
        row = self._canonical_keys(row, err)
        if "text" in row and not set(row) & CONTENT_FIELDS:
            raise err("this record has a text but no question, ranked list or answer: it looks like a corpus "
                      "(chunk id -> text), not a dataset", field="text",
                      fix="give the corpus with --corpus, and as DATASET a file of questions with their "
                          '"retrieved" chunk ids')
        if not _has_content(row) and (not row or not set(row) <= set(FIELDS)):
            raise err(_no_content(row), fix="write one record per sample with at least a question, an answer or a "
                                            "ranked list (see the README's Datasets section); TREC qrels and runs "
                                            "go to `ragmeter trec QRELS RUN`")
        if row.get("id") is None and self.default_ids:
            row["id"] = str(self.position)
            self.defaulted += 1
        sid = _id(row.get("id"), err.field("id"), what="sample id")
        err = err.record(sid)
        if sid in self.seen:
            raise err(f"duplicate sample id (first seen on {self.unit} {self.seen[sid]})", field="id",
                      fix="give every sample a unique id")
        if self.track_ids:
            self.seen[sid] = line

        retrieved = _retrieved(row.get("retrieved"), err.field("retrieved"), self.chunks)
        relevance = _relevance(row.get("relevant"), err.field("relevant"))
        context = row.get("context")
        context_ids = None if context is None else _id_list(context, err.field("context"), "context")
        answerable = row.get("answerable", True)
        if answerable is None:
            answerable = True
        if not isinstance(answerable, bool):
            raise err(f"must be true or false, got {_type_name(answerable)}", field="answerable")
        metadata = row.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise err(f"must be an object, got {_type_name(metadata)}", field="metadata")
        extra = {k: v for k, v in row.items() if k not in FIELDS}
        return Sample(
            id=sid,
            question=_text(row.get("question"), err.field("question")),
            retrieved=retrieved,
            relevance=MappingProxyType(relevance),
            context=context_ids,
            answer=_text(row.get("answer"), err.field("answer")),
            reference=_text(row.get("reference"), err.field("reference")),
            answerable=answerable,
            metadata=MappingProxyType({**metadata, **extra}),
            reference_claims=_claims(row.get("reference_claims"), err.field("reference_claims")),
            answer_claims=_claims(row.get("answer_claims"), err.field("answer_claims")),
            answer_context=None if row.get("answer_context") is None else
            _retrieved(row["answer_context"], err.field("answer_context"), self.chunks),
        )

    def _plain_sample(self, row: Any, line: int) -> Sample | None:
        """The sample of a record in the plainest shape (``id``, ``question``, ``answer``,
        ``reference``, ``retrieved`` as distinct ids, ``relevant`` as ids or id -> number),
        checked in bulk; None for anything else, which :meth:`sample` then reads field by field
        (and names what is wrong). Both give the same sample for a plain record."""
        if type(row) is not dict or not _PLAIN_FIELDS.issuperset(row):
            return None
        sid = row.get("id")
        if type(sid) is not str or not sid.strip() or sid in self.seen:
            return None
        question, answer, reference = row.get("question"), row.get("answer"), row.get("reference")
        if (question is not None and type(question) is not str) or (answer is not None and type(answer) is not str) \
                or (reference is not None and type(reference) is not str):
            return None
        retrieved = row.get("retrieved")
        if retrieved is None:
            chunks: tuple[Chunk, ...] = ()
        elif type(retrieved) is list and _distinct_ids(retrieved):
            chunks = tuple(map(self.chunks.__getitem__, retrieved))  # made on first sight by ChunkTable
        else:
            return None
        relevance = _plain_relevance(row.get("relevant"))
        if relevance is None:
            return None
        self.position += 1
        if self.track_ids:
            self.seen[sid] = line
        return Sample(id=sid, question=question, retrieved=chunks, relevance=MappingProxyType(relevance),
                      answer=answer, reference=reference, metadata=MappingProxyType({}))

    @staticmethod
    def _canonical_keys(row: Mapping[str, Any], err: _ErrorAt) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in row.items():
            name = ALIASES.get(key, key)
            if name in out:
                raise err(f'"{key}" and another column both give "{name}"', field=key, fix="keep only one of them")
            if name not in FIELDS:
                close = difflib.get_close_matches(key, FIELDS, n=1, cutoff=0.75)
                if close:
                    raise err(f'unknown field "{key}"', field=key,
                              fix=f'did you mean "{close[0]}"? Other data goes under "metadata"')
            out[name] = value
        return out


_PLAIN_FIELDS = frozenset({"id", "question", "retrieved", "relevant", "answer", "reference"})


def _has_content(row: Mapping[str, Any]) -> bool:
    """Whether the record gives something to score. One that does not, and holds fields no
    reader takes (``{"foo": 1}``, ``{"qrels": ...}``), is wrong-shaped input; one of ragmeter's
    own fields alone (``{"id": "q1"}``) is an empty sample on purpose."""
    return any(row.get(n) is not None for n in _CONTENT_OR_CLAIMS)


_CONTENT_OR_CLAIMS = (*CONTENT_FIELDS, "reference_claims", "answer_claims")


def _no_content(row: Mapping[str, Any]) -> str:
    """The problem of a record with no question, answer or ranked list: what it holds and the
    formats it was read as."""
    names = [str(k) for k in row if row[k] is not None]
    found = ", ".join(f'"{n}"' for n in names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
    return (f"no question, answer or retrieved chunks (fields found: {found or 'none'}); "
            f"read as each of: {'; '.join(FORMATS_TRIED)}")


class ChunkTable(dict[str, Chunk]):
    """chunk id -> ``Chunk(id)``, made the first time the id is looked up."""

    def __missing__(self, cid: str) -> Chunk:
        chunk = self[cid] = Chunk(cid)
        return chunk


_STR = {str}
_NUMBERS = ({float}, {int}, {float, int})


def _distinct_ids(items: list[Any]) -> bool:
    """Every item a non-blank string, none twice (what a plain ranked list or label list is)."""
    return not items or (set(map(type, items)) == _STR and all(map(str.strip, items)) and len(set(items)) == len(items))


def _plain_relevance(value: Any) -> dict[str, float] | None:
    """``relevant`` given as distinct ids or string id -> finite number, as :func:`_relevance`
    reads it; None for any other value (read, or refused, by :func:`_relevance`)."""
    if value is None:
        return {}
    if type(value) is list:
        return dict.fromkeys(value, 1.0) if _distinct_ids(value) else None
    if type(value) is not dict:
        return None
    if not value:
        return {}
    if set(map(type, value)) != _STR or set(map(type, value.values())) not in _NUMBERS:
        return None
    try:
        grades = list(map(float, value.values()))
    except OverflowError:  # an integer past float's range: refused by _relevance
        return None
    return dict(zip(value, grades)) if all(map(math.isfinite, grades)) else None


class _ErrorAt:
    """Builds errors for one location; ``.field()`` and ``.record()`` narrow it."""

    def __init__(self, file: str, line: int, record: str | None = None, field: str | None = None,
                 unit: str = "line"):
        self.file, self.line, self._record, self._field, self.unit = file, line, record, field, unit

    def record(self, record: str) -> _ErrorAt:
        return _ErrorAt(self.file, self.line, record, self._field, self.unit)

    def field(self, name: str) -> _ErrorAt:
        return _ErrorAt(self.file, self.line, self._record, name, self.unit)

    def __call__(self, message: str, *, field: str | None = None, fix: str | None = None) -> InvalidInputError:
        where = {"line": self.line} if self.unit == "line" else {"row": self.line}
        return InvalidInputError(message, file=self.file, record=self._record, field=field or self._field, fix=fix,
                                 **where)


def _id(value: Any, err: _ErrorAt, *, what: str) -> str:
    if isinstance(value, bool) or value is None:
        raise err(f"missing {what}" if value is None else f"{what} must be a string, got a boolean",
                  fix=f"give each record a string {what}" if "item" not in what  # a sample id
                  else f"write the {what} as a non-empty string")  # 'give each record a string item 1 ...'
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise err(f"{what} must be a string, got {_type_name(value)}", fix=f"write the {what} as a string")
    if not value.strip():
        raise err(f"{what} is empty", fix=f"give a non-empty {what}")
    return value


def _text(value: Any, err: _ErrorAt) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise err(f"must be a string, got {_type_name(value)}")


def _id_list(value: Any, err: _ErrorAt, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise err("must be a list of chunk ids, got a string", fix='write ["id1", "id2"]')
    if not isinstance(value, list):
        raise err(f"must be a list of chunk ids, got {_type_name(value)}")
    ids = []
    seen: set[str] = set()
    for i, item in enumerate(value, start=1):
        if isinstance(item, Mapping):
            item = item.get("id")
        cid = _id(item, err, what=f"{what} item {i} chunk id")
        if cid in seen:
            raise err(f'chunk "{cid}" appears twice (item {i})', fix="list each chunk once")
        seen.add(cid)
        ids.append(cid)
    return tuple(ids)


def _retrieved(value: Any, err: _ErrorAt, made: dict[str, Chunk]) -> tuple[Chunk, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        raise err("must be a list of chunk ids, got a string",
                  fix='write ["id1", "id2"] or [{"id": "id1", "score": 0.9}]')
    if not isinstance(value, list):
        raise err(f"must be a list of chunk ids, got {_type_name(value)}")
    if all(type(item) is str and item.strip() for item in value) and len(set(value)) == len(value):
        # plain distinct ids: nothing below would object
        return tuple(map(made.__getitem__, value)) if isinstance(made, ChunkTable) \
            else tuple([made.get(cid) or made.setdefault(cid, Chunk(cid)) for cid in value])
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    for rank, item in enumerate(value, start=1):
        score = text = None
        if isinstance(item, dict) or isinstance(item, Mapping):
            unknown = set(item) - {"id", "score", "text"}
            if unknown:
                raise err(f"item {rank} has unknown keys {sorted(unknown)}", fix='use "id", "score" and "text"')
            score, text = item.get("score"), item.get("text")
            item = item.get("id")
        cid = _id(item, err, what=f"item {rank} chunk id")
        if cid in seen:
            raise err(f'chunk "{cid}" appears twice in one ranked list (ranks {seen[cid]} and {rank})',
                      fix="remove the duplicate; each chunk has one rank")
        seen[cid] = rank
        if score is not None:
            number = finite_number(score)
            if number is None:
                raise err(f"item {rank} score must be a finite number, got {_shown(score)}")
            score = number
        if text is not None and not isinstance(text, str):
            raise err(f"item {rank} text must be a string, got {_type_name(text)}")
        chunks.append(Chunk(cid, score, text))
    return tuple(chunks)


def finite_number(value: Any) -> float | None:
    """``value`` as a finite float, or None when it is not a number (booleans are not) or does
    not fit one (``1e999`` read as inf, NaN, an integer of 400 digits).

    >>> finite_number(2), finite_number(10 ** 400), finite_number(float("nan")), finite_number(True)
    (2.0, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _shown(value: Any, limit: int = 40) -> str:
    """``repr`` of a value, cut to ``limit`` characters (a 4000-digit number is not echoed whole)."""
    if isinstance(value, int) and abs(value) >= 10 ** 30:
        return f"an integer of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _claims(value: Any, err: _ErrorAt) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(c, str) and c.strip() for c in value):
        raise err("must be a list of non-empty strings (one claim each)", fix='write ["claim one", "claim two"]')
    return tuple(value)


def _relevance(value: Any, err: _ErrorAt) -> dict[str, float]:
    if value is None:
        return {}
    if isinstance(value, list):
        return {cid: 1.0 for cid in _id_list(value, err, "relevant")}
    if isinstance(value, Mapping):
        out: dict[str, float] = {}
        for cid, grade in value.items():
            number = finite_number(grade)
            if number is None:
                raise err(f'grade of chunk "{cid}" must be a finite number, got {_shown(grade)}',
                          fix='write {"chunk-id": 1} (or 2, 3 for graded relevance)')
            out[str(cid)] = number
        return out
    raise err(f"must be a list of chunk ids or an object of chunk id -> grade, got {_type_name(value)}")


def make_samples(records: list[tuple[int, Any]], file: str, *, unit: str = "line") -> list[Sample]:
    """Validate ``(line, record)`` pairs from one source into samples. When no record has an
    id, each takes its position, and stderr says so once."""
    reader = RowReader(file, unit=unit, default_ids=not has_ids(records))
    samples = [reader.sample(rec, line) for line, rec in records]
    if reader.defaulted:
        sys.stderr.write(f"ragmeter: {file}: no record has an id; each sample's id is its position "
                         f"(1 to {len(samples)})\n")
    return samples

