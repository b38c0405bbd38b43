"""OpenInference spans read as RAG requests: one trace as one request (:func:`read_trace`), or one
span that holds a whole request by itself (:func:`span_request`: a file or log of such spans). The
spans come from :mod:`ragmeter.io.otlp`, what their attributes mean from :mod:`ragmeter.io.openinference`.

A trace's request has the trace id as its id. What is read (OpenInference semantic conventions):

- each ``RETRIEVER`` span (``openinference.span.kind``), in start order, is one **retrieval**: its
  ranked list is its documents (:func:`ragmeter.io.openinference.documents`: ids, contents and
  scores in index order; a chunk listed twice counts at its first rank), its query its ``input.value``;
- the **question**: the ``input.value`` of the outermost span that has a text input (the root, for
  a chain; a JSON object's ``question`` / ``query`` / ``input`` field), else the last user message
  of the LLM span (``llm.input_messages.<i>.message``), else the first retriever's query;
- the **answer**: the ``output.value`` of the outermost span with a text output (retrievers and
  embedders aside), else the LLM span's first output message;
- the **conversation**: ``session.id`` (metadata ``session``), and the earlier turns the LLM span
  was given (its input messages before the last user message, metadata ``history``).

A request becomes one sample per retrieval (:func:`request_samples`): each retrieval scored as its
own ranked list and context, ids ``<trace>`` (one retrieval) or ``<trace>#<n>``. The answer belongs
to the request, so it is scored once, on the last retrieval, against every retrieval's chunks
(``Sample.answer_context``); the earlier retrievals carry no answer. Metadata: ``request``,
``retrieval`` (1-based), ``retrievals``, ``trace_id``, ``root_span_id``, ``span_id`` (the
retriever's), ``query``.

A trace without a retriever is not a RAG request (:class:`NotRequest`, not malformed); a document
of a wrong type, or a retrieval trace without a question, is malformed (its reason says which span
and field).

A span that holds a request by itself (:func:`is_span_request`: its attributes have ``input.value``)
is one sample: its id the span's id, the question ``input.value``, the answer ``output.value``, the
ranked list its own documents, its time its start.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Chunk, Sample
from ragmeter.io.openinference import INPUT, OUTPUT, documents, kind, messages
from ragmeter.io.otlp import Rejected, Span, attributes, span_from_json

_QUESTION_FIELDS = ("question", "query", "input", "user_input", "message")
_ANSWER_FIELDS = ("answer", "output", "result", "response", "text", "content")


@dataclass(frozen=True)
class Retrieval:
    """One retriever span's ranked list."""

    span_id: str
    query: str | None
    chunks: tuple[Chunk, ...]


@dataclass(frozen=True)
class TraceRequest:
    """A RAG request read from one trace."""

    id: str
    ts: float  # the root span's start, seconds since the epoch
    root_span_id: str
    question: str
    answer: str | None
    retrievals: tuple[Retrieval, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NotRequest:
    """A trace that is not a RAG request (``malformed`` False: say nothing) or cannot be read as
    one (``malformed`` True: quarantine it with the reason)."""

    reason: str
    malformed: bool = False


def read_trace(spans: Sequence[Span]) -> TraceRequest | NotRequest:
    """The RAG request one trace's spans hold (see the module docstring)."""
    if not spans:
        return NotRequest("no spans")
    by_id = {s.span_id: s for s in spans}
    depth = {s.span_id: _depth(s, by_id) for s in spans}
    order = sorted(spans, key=lambda s: (depth[s.span_id], s.start_ns, s.span_id))
    root = order[0]
    retrievers = sorted((s for s in spans if kind(s) == "RETRIEVER"), key=lambda s: (s.start_ns, s.span_id))
    if not retrievers:
        return NotRequest("no RETRIEVER span (not a RAG request)")
    retrievals = []
    for s in retrievers:
        chunks = _documents(s)
        if isinstance(chunks, str):
            return NotRequest(chunks, malformed=True)
        query = s.attributes.get(INPUT)
        retrievals.append(Retrieval(s.span_id, query if isinstance(query, str) else None, chunks))
    llms = sorted((s for s in spans if kind(s) == "LLM"), key=lambda s: (s.end_ns, s.span_id))
    question = _question(order, llms, retrievals)
    if question is None:
        return NotRequest(f"trace {root.trace_id}: no question: no span has a text input.value, no LLM span a user "
                          "message, no retriever a query", malformed=True)
    answer = _answer(order, llms)
    meta: dict[str, Any] = {}
    for s in order:
        for key, name in (("session.id", "session"), ("user.id", "user")):
            value = s.attributes.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and name not in meta:
                meta[name] = str(value)
    history = _history(llms)
    if history:
        meta["history"] = history
    return TraceRequest(root.trace_id, root.start_ns / 1e9, root.span_id, question, answer, tuple(retrievals), meta)


def request_samples(req: TraceRequest, *, extra: Mapping[str, Any] | None = None) -> tuple[Sample, ...]:
    """One sample per retrieval (see the module docstring); ``extra`` joins each one's metadata."""
    n = len(req.retrievals)
    union = _each_once(c for r in req.retrievals for c in r.chunks)
    out = []
    for i, r in enumerate(req.retrievals, start=1):
        last = i == n
        meta = {**req.metadata, **(extra or {}), "request": req.id, "retrieval": i, "retrievals": n,
                "trace_id": req.id, "root_span_id": req.root_span_id, "span_id": r.span_id}
        if r.query is not None:
            meta["query"] = r.query
        if not last:
            meta["answer_on"] = f"{req.id}#{n}"
        out.append(Sample(id=req.id if n == 1 else f"{req.id}#{i}", question=req.question, retrieved=r.chunks,
                          answer=req.answer if last else None, metadata=meta,
                          answer_context=union if last and n > 1 else None))
    return tuple(out)


def _each_once(chunks: Iterable[Chunk]) -> tuple[Chunk, ...]:
    """Each chunk id once, where it first comes."""
    first: dict[str, Chunk] = {}
    for c in chunks:
        first.setdefault(c.id, c)
    return tuple(first.values())


def _depth(s: Span, by_id: Mapping[str, Span]) -> int:
    """Ancestors within the trace (a parent in another service, or a cycle, ends the walk)."""
    n, seen, cur = 0, {s.span_id}, s
    while cur.parent_id is not None and cur.parent_id in by_id and cur.parent_id not in seen:
        seen.add(cur.parent_id)
        cur = by_id[cur.parent_id]
        n += 1
    return n


def _documents(s: Span) -> tuple[Chunk, ...] | str:
    """The retriever span's ranked list (a chunk listed twice counts at its first rank), or why it
    cannot be read."""
    try:
        chunks = documents(s)
    except InvalidInputError as exc:
        return f"span {s.span_id} (RETRIEVER {s.name!r}): {exc.problem}"[:300]
    return _each_once(chunks)


def _text(value: Any, fields: tuple[str, ...]) -> str | None:
    """Plain text; a JSON string; or a JSON object's first text field among ``fields``."""
    if not isinstance(value, str) or not value.strip():
        return None
    head = value.lstrip()[:1]
    if head not in ("{", "[", '"'):
        return value
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    if isinstance(decoded, str):
        return decoded or None
    if isinstance(decoded, dict):
        for f in fields:
            if isinstance(decoded.get(f), str) and decoded[f].strip():
                return decoded[f]
    return None


def _messages(s: Span, side: str) -> list[tuple[str, str]]:
    """(role, text) of the span's ``side`` messages that have a text content."""
    return [(str(m.get("role", "")), m["content"]) for m in messages(s, side) if isinstance(m.get("content"), str)]


def _outermost_text(order: Sequence[Span], key: str, fields: tuple[str, ...]) -> str | None:
    """The text ``key`` of the outermost span that has one (retrievers, embedders and rerankers aside)."""
    for s in order:
        if kind(s) not in ("RETRIEVER", "EMBEDDING", "RERANKER"):
            text = _text(s.attributes.get(key), fields)
            if text is not None:
                return text
    return None


def _question(order: Sequence[Span], llms: Sequence[Span], retrievals: Sequence[Retrieval]) -> str | None:
    text = _outermost_text(order, INPUT, _QUESTION_FIELDS)
    if text is not None:
        return text
    for s in llms:
        users = [c for role, c in _messages(s, "input") if role in ("user", "human")]
        if users:
            return users[-1]
    return next((r.query for r in retrievals if r.query), None)


def _answer(order: Sequence[Span], llms: Sequence[Span]) -> str | None:
    text = _outermost_text(order, OUTPUT, _ANSWER_FIELDS)
    if text is not None:
        return text
    for s in reversed(llms):
        out = _messages(s, "output")
        if out:
            return out[0][1]
    return None


def _history(llms: Sequence[Span]) -> str | None:
    """The earlier turns the (first) LLM span was given: ``User: ...`` / ``Assistant: ...`` lines
    of its input messages before its last user message (system messages aside), as conversation
    samples' ``history``."""
    for s in llms:
        messages = [(role, c) for role, c in _messages(s, "input") if role != "system"]
        last_user = max((i for i, (role, _) in enumerate(messages) if role in ("user", "human")), default=-1)
        earlier = [f"{'User' if role in ('user', 'human') else 'Assistant'}: {c}"
                   for role, c in messages[:max(last_user, 0)] if role in ("user", "human", "assistant", "ai")]
        if earlier:
            return "\n".join(earlier)
    return None


def group_traces(spans: Iterable[Span]) -> dict[str, list[Span]]:
    """Spans by trace id, in the order first seen."""
    out: dict[str, list[Span]] = {}
    for s in spans:
        out.setdefault(s.trace_id, []).append(s)
    return out


@dataclass(frozen=True)
class SpanRequest:
    """A request one span holds by itself: its id, time (seconds since the epoch, 0 when the span
    gives none), question, answer and ranked list."""

    id: str
    ts: float
    question: str
    answer: str | None
    documents: tuple[Chunk, ...]


def is_span_request(record: Any) -> bool:
    """Whether a span record holds a request by itself: its attributes, in whatever shape, have
    ``input.value`` (its value is checked by :func:`span_request`)."""
    if not isinstance(record, Mapping):
        return False
    raw = record.get("attributes")
    if isinstance(raw, list):  # OTLP's list: the names, without decoding the values
        return any(isinstance(kv, Mapping) and kv.get("key") == INPUT for kv in raw)
    try:
        return INPUT in attributes(raw) if isinstance(raw, Mapping) else f"attributes.{INPUT}" in record
    except (ValueError, RecursionError):
        return False


def span_request(record: Mapping[str, Any]) -> SpanRequest:
    """The request a span record holds (see the module docstring); what it holds of the wrong type
    is an ``InvalidInputError`` naming the field (``attributes``, ``span_id``, ``start_time``, ...)."""
    span = span_from_json(record, hex_ids=False)
    if isinstance(span, Rejected):
        raise InvalidInputError(span.reason, field=span.field)
    chunks = documents(span)
    if not span.span_id:
        raise InvalidInputError("a span needs a span_id", field="span_id")
    question, answer = span.attributes.get(INPUT), span.attributes.get(OUTPUT)
    if not isinstance(question, str):
        raise InvalidInputError(f"{INPUT} must be a string, got {_type(question)}", field="attributes")
    if answer is not None and not isinstance(answer, str):
        raise InvalidInputError(f"{OUTPUT} must be a string, got {_type(answer)}", field="attributes")
    return SpanRequest(span.span_id, span.start_ns / 1e9, question, answer, chunks)


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__
