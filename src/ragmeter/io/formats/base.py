"""What an input format says about itself (:class:`Format`), and what formats share: ragmeter's
own field names, the roles a field of contexts plays, and contexts given as texts.

A format is one module of this package with a ``FORMAT``: the names it gives ragmeter's fields
(``aliases``), its fields of contexts and the role each plays (``contexts``), a record of its
own that it reads into fields the others read (``record``), records that hold several samples
(``conversations``, ``tasks``), what it is listed as in the errors, and the attribute of a
collection object that holds its samples (``holders``). :mod:`ragmeter.io.formats.registry`
registers each and dispatches to them.

A context given as text becomes a chunk whose id is :func:`content_id` of the text, so the
same text gets the same id in every row. Reference contexts given as texts become relevance
labels (grade 1) by exact text match: a retrieved text is relevant when it is character for
character one of the reference texts (no case, whitespace or Unicode folding).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.core.errors import InvalidInputError

#: ragmeter's own fields of a record, in the order other names for them are listed.
FIELDS = ("id", "question", "retrieved", "relevant", "context", "answer", "reference", "answerable", "metadata",
          "reference_claims", "answer_claims", "answer_context")

#: A conversation's speakers, as Ragas and DeepEval name them.
USER, ASSISTANT = ("user", "human"), ("assistant", "ai", "agent")

# The roles a field of contexts plays, in the order they are read (a clash names the later field).
RETRIEVED_TEXTS = "retrieved texts"  # the ranked list, as texts (their ids: RETRIEVED_IDS beside, or content ids)
RETRIEVED_DOCUMENTS = "retrieved documents"  # the ranked list, as [{"doc_id", "text"}]
RETRIEVED_IDS = "retrieved ids"  # the ranked list's ids: with RETRIEVED_TEXTS, theirs; alone, the list
RELEVANT_IDS = "relevant ids"  # the relevant chunks' ids
RELEVANT_TEXTS = "relevant texts"  # the relevant chunks, as texts (unless RELEVANT_IDS say which)
REFERENCE_LINES = "reference lines"  # the reference, as several texts (joined by newlines)


@dataclass(frozen=True)
class ContextField:
    """A field of contexts: its role, and ``beside``: the field it must be given with to be this
    format's (DeepEval's ``context`` beside ``retrieval_context``; alone, it is ragmeter's own)."""

    role: str
    beside: str | None = None


@dataclass(frozen=True)
class RecordReader:
    """A record of the format's own shape (a RAGChecker output, an OpenInference span), read into
    fields the other formats read; errors name the field, the row reader adds the record."""

    recognises: Callable[[Mapping[str, Any]], bool]
    read: Callable[[Mapping[str, Any]], Mapping[str, Any]]


def id_or_name(record: Mapping[str, Any]) -> Any:
    return record.get("id", record.get("name"))


@dataclass(frozen=True)
class Conversation:
    """A record that holds a conversation, one sample per turn.

    ``field``: where its turns are (a part of the wrong type is named there); ``turns(record,
    conversation id, file, line, aliases)``: its turns as records (``aliases``: every format's
    names for ragmeter's fields, which the row reader reads); ``numbered``: the turns get their ids,
    ``turn``, ``history`` and the conversation's other fields from the registry (else ``turns``
    gives them whole); ``specificity``: shapes are tried from the most specific."""

    field: str
    recognises: Callable[[Mapping[str, Any]], bool]
    turns: Callable[[Mapping[str, Any], str, str, int, Mapping[str, str]], list[dict]]
    conversation_id: Callable[[Mapping[str, Any]], Any] = id_or_name
    numbered: bool = True
    specificity: int = 0


@dataclass(frozen=True)
class Tasks:
    """Records read together, each into one or more samples (MTRAG's tasks, one per prediction):
    ``rows(records, file, aliases)`` gives ``(line, record)`` pairs in file order; ``aliases``:
    every format's names for ragmeter's fields, passed on to the row reader."""

    recognises: Callable[[Mapping[str, Any]], bool]
    rows: Callable[[list[tuple[int, Mapping[str, Any]]], str, Mapping[str, str]], list[tuple[int, dict]]]


@dataclass(frozen=True)
class Format:
    """One input format (see the module docstring). ``tried``: how the error for a record no
    format reads names it; ``accepted``: what :func:`ragmeter.load_dataset` takes of it, as the
    error for data of no known kind lists it."""

    name: str
    tried: str | None = None
    accepted: tuple[str, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)
    contexts: Mapping[str, ContextField] = field(default_factory=dict)
    holders: Mapping[str, str] = field(default_factory=dict)  # attribute -> the collection's name in errors
    record: RecordReader | None = None
    conversations: tuple[Conversation, ...] = ()
    tasks: Tasks | None = None


def content_id(text: str) -> str:
    """The chunk id of a context given as text: ``text-`` and the first 16 hex digits of the
    SHA-256 of its UTF-8 bytes (stable across rows, runs and machines).

    >>> content_id("abc")
    'text-ba7816bf8f01cfea'
    """
    return "text-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def texts(row: Mapping[str, Any], name: str) -> list[str]:
    value = row[name]
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        got = "a string" if isinstance(value, str) else type(value).__name__
        raise InvalidInputError(f"must be a list of texts, got {got}",
                                field=name, fix='write ["first passage", "second passage"]')
    for i, t in enumerate(value, start=1):
        if not isinstance(t, str):
            raise InvalidInputError(f"item {i} must be a text, got {type(t).__name__}", field=name)
    return list(value)


def ids(row: Mapping[str, Any], name: str) -> list[Any]:
    value = row[name]
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidInputError("must be a list of chunk ids", field=name, fix='write ["id1", "id2"]')
    return list(value)


def document_chunks(value: Any, name: str) -> list[dict[str, Any]]:
    """``[{"doc_id", "text"}]`` -> chunks (a text alone gets its content id)."""
    if not isinstance(value, (list, tuple)):
        raise InvalidInputError(f"must be a list of passages, got {type(value).__name__}", field=name,
                                fix='write [{"doc_id": "d1", "text": "..."}]')
    chunks = []
    for i, item in enumerate(value, start=1):
        if isinstance(item, str):
            chunks.append({"id": content_id(item), "text": item})
            continue
        if not isinstance(item, Mapping) or not isinstance(item.get("text"), str):
            raise InvalidInputError(f"item {i} must be an object with a \"text\"", field=name,
                                    fix='write {"doc_id": "d1", "text": "..."}')
        doc = item.get("doc_id", item.get("id"))
        chunks.append({"id": content_id(item["text"]) if doc is None else doc, "text": item["text"]})
    return chunks


def give(out: dict[str, Any], target: str, source: str, value: Any, given_by: dict[str, str]) -> None:
    """``out[target] = value``, read from the field ``source``; a second field for one target is refused."""
    if target in out or target in given_by:
        other = given_by.get(target, target)
        raise InvalidInputError(f'"{source}" and "{other}" both give "{target}"', field=source,
                                fix="keep only one of them")
    out[target] = value
    given_by[target] = source


@dataclass(frozen=True)
class FileFormat:
    """A format whose samples come from the whole file, its records grouped across lines (a
    trace's spans arrive in several records): ``recognises(records)``, ``samples(records, file)``.
    Asked before the per-record formats (:func:`ragmeter.io.dataset.load_dataset`)."""

    name: str
    recognises: Callable[[Sequence[tuple[int, Any]]], bool]
    samples: Callable[[Sequence[tuple[int, Any]], str], list[Any]]
