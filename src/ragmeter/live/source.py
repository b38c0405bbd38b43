"""Parsing a request log's lines into samples (the lines come from :mod:`ragmeter.live.tail`).

Two shapes of request per line: ragmeter's own (``log_request``): ``{"request_id", "ts", "question",
"retrieved": [{"id", "text", "score"?}], "answer", "context"?, "metadata"?}``; or an
OpenTelemetry/OpenInference span exported as JSON, whose attributes (flattened, nested, or OTLP's
list) carry ``input.value`` (the question), ``output.value`` (the answer) and
``retrieval.documents.<i>.document.id`` / ``.content`` / ``.score``, its time ``start_time`` or
``startTimeUnixNano`` (read by :func:`ragmeter.io.traces.span_request`, as ``eval`` reads a file of
such spans). A line ``{"request_id", "feedback"}`` (``ragmeter.log_feedback``) is user feedback on an
earlier request (:class:`Feedback`).

A line is validated whole before it becomes a sample: anything else (invalid JSON, a torn
line, ``"ts": "yesterday"``, an answer that is a number, a context of numbers) is a
:class:`Rejected` with the reason, which the watcher writes to its quarantine file. Nothing
here raises on what a line holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Chunk, Sample
from ragmeter.io.json_text import decode_json
from ragmeter.io.rows import RowReader
from ragmeter.io.traces import is_span_request, span_request
from ragmeter.live.gauges import feedback_value


@dataclass(frozen=True)
class LoggedRequest:
    """One request read from the log: its id, its time, and the sample it becomes (a request that
    retrieved several times, read from a trace: one sample per retrieval, in ``samples``, and its
    root span's id)."""

    id: str
    ts: float
    sample: Sample
    samples: tuple[Sample, ...] = ()
    root_span_id: str | None = None

    @property
    def all_samples(self) -> tuple[Sample, ...]:
        return self.samples or (self.sample,)


@dataclass(frozen=True)
class Feedback:
    """User feedback on an earlier request, joined to it by id: ``{"request_id", "feedback"}``
    (``ragmeter.log_feedback``), or sent to the OTLP receiver's ``/v1/feedback``."""

    id: str
    value: float
    ts: float


@dataclass(frozen=True)
class Skipped:
    """Something read that is not a request to score, and is not malformed (a trace without a
    retriever): counted, never quarantined."""

    reason: str


@dataclass(frozen=True)
class Rejected:
    """A line that is not a request, and why (the quarantine file records both)."""

    reason: str


def parse(raw: bytes) -> LoggedRequest | Feedback | Rejected:
    """A request, feedback on one, or :class:`Rejected` with the reason for a line that is neither."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejected(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})")
    try:
        obj = decode_json(text, file="log")
    except InvalidInputError as exc:
        return Rejected(exc.problem)
    if not isinstance(obj, dict):
        return Rejected(f"a line must be a JSON object, got {type(obj).__name__}")
    try:
        if is_span_request(obj):
            return _span(obj)
        if "feedback" in obj and "question" not in obj:
            return feedback(obj.get("request_id"), obj["feedback"], obj.get("ts"))
        return _plain_request(obj) or _request(obj)
    except InvalidInputError as exc:
        return Rejected(exc.problem if exc.field is None else f'field "{exc.field}": {exc.problem}')


def _request(obj: dict) -> LoggedRequest:
    rid = obj.get("request_id")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)) or not str(rid).strip():
        raise InvalidInputError("a request needs a non-empty string request_id (write the log with "
                                "ragmeter.log_request, which adds one, or give each line a unique request_id)",
                                field="request_id")
    context = obj.get("context")
    if context is not None and (not isinstance(context, list) or not all(isinstance(c, str) for c in context)):
        raise InvalidInputError("must be a list of strings", field="context")
    row = {"id": str(rid), "question": obj.get("question"), "retrieved": obj.get("retrieved"),
           "answer": obj.get("answer"), "context": context, "metadata": obj.get("metadata")}
    if not isinstance(row["question"], str):
        raise InvalidInputError(f"must be a string, got {_kind(row['question'])}", field="question")
    sample = RowReader("log", track_ids=False).sample({k: v for k, v in row.items() if v is not None}, 0)
    return LoggedRequest(sample.id, _timestamp(obj.get("ts"), "ts"), sample)


_CHUNK_KEYS = frozenset({"id", "text", "score"})


def _plain_request(obj: dict) -> LoggedRequest | None:
    """The request of a line in the log's plainest shape (a string ``request_id``, a question, an
    answer or none, ``retrieved`` as distinct ``{"id", "text"?, "score"?}`` chunks, no context or
    metadata), made directly; None for anything else, which :func:`_request` reads through the
    dataset's row reader (and names what is wrong). Both give the same request for a plain line."""
    rid, question, answer, retrieved = obj.get("request_id"), obj.get("question"), obj.get("answer"), \
        obj.get("retrieved")
    if type(rid) is not str or not rid.strip() or type(question) is not str \
            or (answer is not None and type(answer) is not str) \
            or obj.get("context") is not None or obj.get("metadata") is not None:
        return None
    chunks: list[Chunk] = []
    if retrieved is not None:
        if type(retrieved) is not list:
            return None
        seen: set[str] = set()
        for item in retrieved:
            if type(item) is not dict or not _CHUNK_KEYS.issuperset(item):
                return None
            cid, text, score = item.get("id"), item.get("text"), item.get("score")
            if type(cid) is not str or not cid.strip() or cid in seen or (text is not None and type(text) is not str):
                return None
            if score is not None:
                if type(score) not in (int, float) or not math.isfinite(score):
                    return None
                score = float(score)
            seen.add(cid)
            chunks.append(Chunk(cid, score, text))
    sample = Sample(id=rid, question=question, retrieved=tuple(chunks), relevance=MappingProxyType({}), answer=answer,
                    metadata=MappingProxyType({}))
    return LoggedRequest(rid, _timestamp(obj.get("ts"), "ts"), sample)


def feedback(rid: Any, value: Any, ts: Any = None) -> Feedback:
    """A feedback record, or ``InvalidInputError`` naming the field."""
    if isinstance(rid, bool) or not isinstance(rid, (str, int)) or not str(rid).strip():
        raise InvalidInputError("feedback needs the request_id of the request it is about", field="request_id")
    number = feedback_value(value)
    if number is None:
        raise InvalidInputError(f"must be a number (1 good, -1 bad, or a score), true/false or up/down, got "
                                f"{str(value)[:40]!r}", field="feedback")
    return Feedback(str(rid), number, _timestamp(ts, "ts"))


def _span(obj: dict) -> LoggedRequest:
    got = span_request(obj)
    return LoggedRequest(got.id, got.ts,
                         Sample(id=got.id, question=got.question, retrieved=got.documents, answer=got.answer))


def _timestamp(value: Any, field: str) -> float:
    """Seconds since the epoch: a finite number, an ISO 8601 string, or absent (0)."""
    if value is None:
        return 0.0
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInputError(f"must be seconds since the epoch or an ISO 8601 time, got {value[:40]!r}",
                                    field=field) from None
        return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"must be a number, got {_kind(value)}", field=field)
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise InvalidInputError("must be a finite number", field=field)
    return number


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
