"""Reading a growing request log: complete lines from a byte offset, parsed into samples.

Two shapes per line: ragmeter's own (``log_request``): ``{"request_id", "ts", "question",
"retrieved": [{"id", "text"}], "answer", "context"?}``; or an OpenTelemetry/OpenInference
span exported as JSON, whose flattened attributes carry ``input.value`` (the question),
``output.value`` (the answer) and ``retrieval.documents.<i>.document.id`` / ``.content``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ragmeter.core.sample import Chunk, Sample

_DOC = re.compile(r"retrieval\.documents\.(\d+)\.document\.(id|content)$")


@dataclass(frozen=True)
class LoggedRequest:
    """One request read from the log: its id, its time, and the sample it becomes."""

    id: str
    ts: float
    sample: Sample


def read_new(path: str, offset: int) -> tuple[list[tuple[int, bytes]], int]:
    """Complete lines after ``offset`` as (start offset, bytes), and the offset after them."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n")
    if end < 0:
        return [], offset
    out, pos = [], offset
    for raw in data[:end + 1].split(b"\n")[:-1]:
        out.append((pos, raw))
        pos += len(raw) + 1
    return out, offset + end + 1


def parse(raw: bytes) -> LoggedRequest | None:
    """A request, or None for a line that is not one (counted as malformed by the caller)."""
    try:
        obj = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(obj, dict):
        return None
    attrs = obj.get("attributes")
    if isinstance(attrs, dict) and "input.value" in attrs:
        return _span(obj, attrs)
    if not isinstance(obj.get("question"), str) or not obj.get("request_id"):
        return None
    chunks = []
    for item in obj.get("retrieved") or []:
        if not isinstance(item, dict) or not item.get("id"):
            return None
        chunks.append(Chunk(str(item["id"]), item.get("score"), item.get("text")))
    context = tuple(obj["context"]) if isinstance(obj.get("context"), list) else None
    rid = str(obj["request_id"])
    sample = Sample(id=rid, question=obj["question"], retrieved=tuple(chunks), context=context,
                    answer=obj.get("answer"))
    return LoggedRequest(rid, float(obj.get("ts") or 0.0), sample)


def _span(obj: dict, attrs: dict) -> LoggedRequest | None:
    docs: dict[int, dict] = {}
    for key, value in attrs.items():
        m = _DOC.match(key)
        if m:
            docs.setdefault(int(m.group(1)), {})[m.group(2)] = value
    chunks = tuple(Chunk(str(d.get("id", f"doc-{i}")), None, d.get("content")) for i, d in sorted(docs.items()))
    span_id = obj.get("span_id") or (obj.get("context") or {}).get("span_id")
    if not span_id:
        return None
    ts = obj.get("start_time") or obj.get("startTimeUnixNano") or 0
    return LoggedRequest(str(span_id), float(ts) if not isinstance(ts, str) else 0.0,
                   Sample(id=str(span_id), question=str(attrs["input.value"]), retrieved=chunks,
                          answer=attrs.get("output.value")))
