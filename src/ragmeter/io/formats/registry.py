"""The input formats, registered once, and the one place records are dispatched to them.

:data:`MODULES` names each format's module of this package (its ``FORMAT``: see
:class:`~ragmeter.io.formats.base.Format`); the tables every reader uses are written from them:
:data:`ALIASES` (other names for ragmeter's fields), :data:`CONTEXTS` (fields of contexts and
their roles), :data:`FORMATS_TRIED` and :data:`ACCEPTED` (what the errors list), :data:`HOLDERS`
(collection objects' attributes). :func:`native_fields` reads one record's fields as
ragmeter's, :func:`conversation_of` finds the shape of a record that holds several samples
(:mod:`ragmeter.io.formats.conversations` turns them into one record per sample).

A new format is its module here and one line in :data:`MODULES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, cast

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.formats.base import (
    FIELDS,
    REFERENCE_LINES,
    RELEVANT_IDS,
    RELEVANT_TEXTS,
    RETRIEVED_DOCUMENTS,
    RETRIEVED_IDS,
    RETRIEVED_TEXTS,
    ContextField,
    Conversation,
    FileFormat,
    Format,
    content_id,
    document_chunks,
    give,
    ids,
    texts,
)

#: The format modules, in the order the errors list them and their names are read.
MODULES = (
    "native",
    "ragas",
    "deepeval",
    "ragchecker",
    "turns",
    "mtrag",
    "openinference",
    "samples",
)
FORMATS: tuple[Format, ...] = tuple(cast(Format, importlib.import_module(f"ragmeter.io.formats.{name}").FORMAT)
                                    for name in MODULES)
#: The formats read from a whole file (a trace's spans span records), asked first, in this order.
FILE_MODULES = ("trace_exports",)
FILE_FORMATS: tuple[FileFormat, ...] = tuple(
    cast(FileFormat, importlib.import_module(f"ragmeter.io.formats.{name}").FORMAT) for name in FILE_MODULES)


def _aliases() -> dict[str, str]:
    """Every format's other names for ragmeter's fields, by the field they name (in
    :data:`~ragmeter.io.formats.base.FIELDS` order), then by format; a name two formats use
    must name one field."""
    found: dict[str, str] = {}
    for fmt in FORMATS:
        for name, target in fmt.aliases.items():
            if found.setdefault(name, target) != target:
                raise ValueError(f"{fmt.name}: {name!r} names {target!r}, another format's {found[name]!r}")
    return dict(sorted(found.items(), key=lambda item: FIELDS.index(item[1])))


#: Other tools' names for ragmeter's fields (``user_input`` -> ``question``, ...), one table.
ALIASES = _aliases()
#: Fields of contexts (as texts or ids) -> their role, from every format.
CONTEXTS: dict[str, ContextField] = {name: f for fmt in FORMATS for name, f in fmt.contexts.items()}
#: What a record with no question, answer or ranked list was tried as.
FORMATS_TRIED = tuple(fmt.tried for fmt in FORMATS if fmt.tried)
#: What ``load_dataset`` reads (the error for data of another kind lists it).
ACCEPTED = tuple(line for fmt in FORMATS for line in fmt.accepted)
#: An attribute of a collection object that holds its samples -> the collection's name.
HOLDERS = {attr: label for fmt in FORMATS for attr, label in fmt.holders.items()}
#: The shapes of a record that holds a conversation, the most specific first.
CONVERSATIONS = tuple(sorted((c for fmt in FORMATS for c in fmt.conversations), key=lambda c: -c.specificity))
TASKS = tuple(fmt.tasks for fmt in FORMATS if fmt.tasks is not None)


def conversation_of(record: Any) -> Conversation | None:
    """The conversation shape ``record`` has, or None."""
    if not isinstance(record, dict):
        return None
    return next((c for c in CONVERSATIONS if c.recognises(record)), None)


def is_task(record: Any) -> bool:
    return isinstance(record, dict) and any(t.recognises(record) for t in TASKS)


def is_conversational(record: Any) -> bool:
    """Whether ``record`` holds several samples (a conversation, a task): read whole, not row by row."""
    return is_task(record) or conversation_of(record) is not None


def native_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with each format's record of its own read (a RAGChecker output, an OpenInference
    span) and its fields of contexts turned into ``retrieved`` (chunk objects with text),
    ``relevant`` (chunk ids) and ``reference``. Other fields are left to the row reader (its
    alias table maps ``user_input``, ``response``, ``input`` and the rest)."""
    for fmt in FORMATS:
        if fmt.record is not None and fmt.record.recognises(row):
            row = fmt.record.read(row)
    active = {name: f for name, f in CONTEXTS.items()
              if row.get(name) is not None and (f.beside is None or row.get(f.beside) is not None)}
    if not active:
        return dict(row)  # ragmeter's own row (a "context" alone holds chunk ids)
    out = {k: v for k, v in row.items() if k not in CONTEXTS or (k not in active and CONTEXTS[k].beside is not None)}
    given_by: dict[str, str] = {}

    def named(role: str) -> list[str]:
        return [name for name, f in active.items() if f.role == role]

    retrieved, retrieved_ids = named(RETRIEVED_TEXTS), named(RETRIEVED_IDS)
    for name in retrieved:
        found = texts(row, name)
        if retrieved_ids:
            chunk_ids = ids(row, retrieved_ids[0])
            if len(chunk_ids) != len(found):
                raise _count_error(retrieved_ids[0], len(chunk_ids), len(found), name)
        else:
            chunk_ids = [content_id(t) for t in found]
        give(out, "retrieved", name, [{"id": i, "text": t} for i, t in zip(chunk_ids, found)], given_by)
    for name in named(RETRIEVED_DOCUMENTS):
        give(out, "retrieved", name, document_chunks(row[name], name), given_by)
    for name in retrieved_ids if not retrieved else ():
        give(out, "retrieved", name, ids(row, name), given_by)
    relevant_ids = named(RELEVANT_IDS)
    for name in relevant_ids:
        give(out, "relevant", name, ids(row, name), given_by)
    for name in named(RELEVANT_TEXTS) if not relevant_ids else ():  # the ids say which chunks are relevant
        give(out, "relevant", name, list(dict.fromkeys(content_id(t) for t in texts(row, name))), given_by)
    for name in named(REFERENCE_LINES):
        give(out, "reference", name, "\n".join(texts(row, name)), given_by)
    return out


def _count_error(name: str, n_ids: int, n_texts: int, text_field: str) -> InvalidInputError:
    return InvalidInputError(f"has {n_ids} ids for {n_texts} texts in \"{text_field}\"", field=name,
                             fix="give one id per retrieved text")
