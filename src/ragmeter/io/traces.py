"""One trace's OpenInference spans read as one RAG request: its question, answer and retrievals.

The request's id is the trace id. What is read (OpenInference semantic conventions):

- each ``RETRIEVER`` span (``openinference.span.kind``), in start order, is one **retrieval**: its
  ranked list is ``retrieval.documents.<i>.document.id`` / ``.content`` / ``.score`` in index
  order (a document without an id gets the content-hash id of :func:`ragmeter.io.formats.base.content_id`,
  as contexts given as texts do), its query is its ``input.value``;
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
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.core.sample import Chunk, Sample
from ragmeter.io.formats.base import content_id
from ragmeter.io.otlp import Span

KIND = "openinference.span.kind"
_DOC = re.compile(r"retrieval\.documents\.(\d{1,6})\.document\.(id|content|score)$")
_MSG = re.compile(r"llm\.(input|output)_messages\.(\d{1,6})\.message\.(role|content)$")
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
    retrievers = sorted((s for s in spans if _kind(s) == "RETRIEVER"), key=lambda s: (s.start_ns, s.span_id))
    if not retrievers:
        return NotRequest("no RETRIEVER span (not a RAG request)")
    retrievals = []
    for s in retrievers:
        chunks = _documents(s)
        if isinstance(chunks, str):
            return NotRequest(chunks, malformed=True)
        query = s.attributes.get("input.value")
        retrievals.append(Retrieval(s.span_id, query if isinstance(query, str) else None, chunks))
    llms = sorted((s for s in spans if _kind(s) == "LLM"), key=lambda s: (s.end_ns, s.span_id))
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
    union: dict[str, Chunk] = {}
    for r in req.retrievals:
        for c in r.chunks:
            union.setdefault(c.id, c)
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
                          answer_context=tuple(union.values()) if last and n > 1 else None))
    return tuple(out)


def _kind(s: Span) -> str:
    return str(s.attributes.get(KIND, "")).upper()


def _depth(s: Span, by_id: Mapping[str, Span]) -> int:
    """Ancestors within the trace (a parent in another service, or a cycle, ends the walk)."""
    n, seen, cur = 0, {s.span_id}, s
    while cur.parent_id is not None and cur.parent_id in by_id and cur.parent_id not in seen:
        seen.add(cur.parent_id)
        cur = by_id[cur.parent_id]
        n += 1
    return n


def _documents(s: Span) -> tuple[Chunk, ...] | str:
    """The retriever span's documents in index order, or why they cannot be read."""
    docs: dict[int, dict[str, Any]] = {}
    for key, value in s.attributes.items():
        m = _DOC.match(key)
        if m:
            docs.setdefault(int(m.group(1)), {})[m.group(2)] = value
    out, ids = [], set()
    for i, d in sorted(docs.items()):
        where = f"span {s.span_id} (RETRIEVER {s.name!r}): retrieval.documents.{i}.document"
        cid, text, score = d.get("id"), d.get("content"), d.get("score")
        if text is not None and not isinstance(text, str):
            return f"{where}.content must be a string, got {type(text).__name__}"
        if cid is None:
            if text is None:
                return f"{where} has neither an id nor a content"
            cid = content_id(text)
        if isinstance(cid, bool) or not isinstance(cid, (str, int)) or not str(cid).strip():
            return f"{where}.id must be a non-empty string, got {cid!r}"[:300]
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                                  or not math.isfinite(score)):
            return f"{where}.score must be a finite number, got {score!r}"[:300]
        if str(cid) in ids:
            continue  # a chunk listed twice in one ranking: its first rank counts
        ids.add(str(cid))
        out.append(Chunk(str(cid), None if score is None else float(score), text))
    return tuple(out)


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
    found: dict[int, dict[str, Any]] = {}
    for key, value in s.attributes.items():
        m = _MSG.match(key)
        if m and m.group(1) == side:
            found.setdefault(int(m.group(2)), {})[m.group(3)] = value
    return [(str(m.get("role", "")), m["content"]) for _, m in sorted(found.items())
            if isinstance(m.get("content"), str)]


def _question(order: Sequence[Span], llms: Sequence[Span], retrievals: Sequence[Retrieval]) -> str | None:
    for s in order:
        if _kind(s) in ("RETRIEVER", "EMBEDDING", "RERANKER"):
            continue
        text = _text(s.attributes.get("input.value"), _QUESTION_FIELDS)
        if text is not None:
            return text
    for s in llms:
        users = [c for role, c in _messages(s, "input") if role in ("user", "human")]
        if users:
            return users[-1]
    return next((r.query for r in retrievals if r.query), None)


def _answer(order: Sequence[Span], llms: Sequence[Span]) -> str | None:
    for s in order:
        if _kind(s) in ("RETRIEVER", "EMBEDDING", "RERANKER"):
            continue
        text = _text(s.attributes.get("output.value"), _ANSWER_FIELDS)
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
