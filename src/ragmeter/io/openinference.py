"""What the OpenInference semantic conventions (Arize's, for OpenTelemetry traces of LLM
applications) put in a span's attributes, read once for every reader of spans: a trace read as a
RAG request (:mod:`ragmeter.io.traces`, for ``eval`` and ``watch``) and the action grader's tool
calls (:mod:`ragmeter.actions.readers`). The span itself, in whatever shape it came, is read by
:mod:`ragmeter.io.otlp`, its attributes flattened to dotted keys.

The conventions flatten a list into indexed keys, ``<list>.<i>.<field>``
(``retrieval.documents.0.document.id``, ``llm.input_messages.1.message.content``,
``llm.output_messages.0.message.tool_calls.0.tool_call.function.name``, ``llm.tools.0.tool.name``);
:func:`indexed` reads them back in index order. A span's kind is ``openinference.span.kind``
(``RETRIEVER``, ``LLM``, ``TOOL``, ``CHAIN``, ...); its text input and output ``input.value`` and
``output.value``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Chunk
from ragmeter.io.formats.base import content_id
from ragmeter.io.otlp import KIND, Span

INPUT, OUTPUT = "input.value", "output.value"
_DOCUMENT_FIELDS = ("document.id", "document.content", "document.score")


def kind(span: Span) -> str:
    """The span's kind in capitals (``RETRIEVER``), '' when it says none."""
    return str(span.attributes.get(KIND, "")).upper()


def indexed(attrs: Mapping[str, Any], prefix: str) -> list[tuple[int, dict[str, Any]]]:
    """The items of the list flattened into ``<prefix>.<i>.<field>`` keys, in index order, each as
    ``{field: value}`` (a key whose index is not a whole number is not one of them).

    >>> indexed({"m.1.role": "user", "m.0.role": "system", "m.0.content": "Be brief.", "m.x.role": "?"}, "m")
    [(0, {'role': 'system', 'content': 'Be brief.'}), (1, {'role': 'user'})]
    """
    head = prefix + "."
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if key.startswith(head):
            index, dot, rest = key[len(head):].partition(".")
            if dot and rest and index.isascii() and index.isdigit() and len(index) <= 9:
                found.setdefault(int(index), {})[rest] = value
    return sorted(found.items())


def documents(span: Span) -> tuple[Chunk, ...]:
    """The documents a span retrieved (``retrieval.documents.<i>.document.id`` / ``.content`` /
    ``.score``), in index order, as chunks: a document without an id gets the content-hash id of
    :func:`~ragmeter.io.formats.base.content_id`, as contexts given as texts do. A document of a
    wrong type is an ``InvalidInputError`` (field ``attributes``) naming the attribute.

    >>> span = Span("t", "s", None, "retrieve", 0, 0, {"retrieval.documents.1.document.content": "b",
    ...             "retrieval.documents.0.document.id": "a", "retrieval.documents.0.document.score": 0.5})
    >>> documents(span) == (Chunk("a", 0.5, None), Chunk(content_id("b"), None, "b"))
    True
    """
    out = []
    for i, doc in indexed(span.attributes, "retrieval.documents"):
        if not any(f in doc for f in _DOCUMENT_FIELDS):
            continue  # metadata alone: not a ranked document
        where = f"retrieval.documents.{i}.document"
        cid, text, score = (doc.get(f) for f in _DOCUMENT_FIELDS)
        if text is not None and not isinstance(text, str):
            raise _error(f"{where}.content must be a string, got {type(text).__name__}")
        if cid is None:
            if text is None:
                raise _error(f"{where} has neither an id nor a content")
            cid = content_id(text)
        if isinstance(cid, bool) or not isinstance(cid, (str, int)) or not str(cid).strip():
            raise _error(f"{where}.id must be a non-empty string, got {_shown(cid)}")
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                                  or not math.isfinite(score)):
            raise _error(f"{where}.score must be a finite number, got {_shown(score)}")
        out.append(Chunk(str(cid), None if score is None else float(score), text))
    return tuple(out)


def messages(span: Span, side: str) -> list[dict[str, Any]]:
    """An LLM span's ``input`` or ``output`` messages in order, each as its ``message.`` fields
    (``role``, ``content``, ``tool_call_id``, ``tool_calls.<j>.tool_call.function.name``, ...)."""
    return [{k[len("message."):]: v for k, v in m.items() if k.startswith("message.")}
            for _, m in indexed(span.attributes, f"llm.{side}_messages")]


def _error(problem: str) -> InvalidInputError:
    return InvalidInputError(problem, field="attributes")


def _shown(value: Any) -> str:
    return repr(value)[:60]
