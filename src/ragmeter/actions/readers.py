"""Reading observed tool calls and declared tools, in three formats, into ``ToolCall``s.

- OpenAI chat messages: assistant messages with ``tool_calls`` (``function.name`` and
  ``function.arguments``, a JSON string) and ``tool`` messages whose ``tool_call_id``
  carries the result; the legacy ``function_call`` / ``function`` role pair too.
- OpenInference spans (as exported to JSONL, attributes flattened, nested or OTLP's lists, read
  by :mod:`ragmeter.io.otlp` and :mod:`ragmeter.io.openinference` as ``eval`` and ``watch`` read
  them): ``TOOL`` spans (``tool.name``, arguments in ``input.value``, result in ``output.value``),
  ordered by start time; without TOOL spans, the tool calls in LLM spans' output messages
  (``llm.output_messages.<i>.message.tool_calls.<j>.tool_call.function.name`` /
  ``.arguments`` / ``.id``) with results from later ``tool`` input messages. Declared tools
  come from ``llm.tools.<i>.tool.name`` or ``.tool.json_schema``.
- a plain list of ``{"name", "arguments", "result"}`` (``tool``/``args``/``input``/``output``
  accepted as aliases).

:func:`read_tool_calls` tells the three apart. Declared ``tools`` are read from the
OpenAI ``tools`` list, MCP's ``tools/list`` shape, a list of names, or ``{"name", ...}``.
Bad input is an ``InvalidInputError`` naming the record and field; arguments that are not
JSON are kept raw (they are what the model sent).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.actions.calls import AgentRun, ToolCall, ToolSpec
from ragmeter.actions.criteria import parse_criteria
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.finite import find_non_finite
from ragmeter.core.sample import Sample
from ragmeter.io import openinference
from ragmeter.io.otlp import Rejected, Span, span_from_json
from ragmeter.io.traces import group_traces


class _Where:
    def __init__(self, file: str | None = None, line: int | None = None, record: str | None = None) -> None:
        self.file, self.line, self.record = file, line, record

    def error(self, message: str, field: str, fix: str | None = None) -> InvalidInputError:
        return InvalidInputError(message, file=self.file, line=self.line, record=self.record, field=field, fix=fix)


def _decode(value: Any) -> Any:
    """A JSON string decoded when it is JSON; anything else as it is."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "{[\"" or text in ("true", "false", "null") or text[:1].isdigit() or text[:1] == "-":
            try:
                return json.loads(text)
            except ValueError:
                return value
    return value


def _arguments(value: Any) -> tuple[Mapping[str, Any] | None, str | None]:
    """(arguments, raw text): arguments holding NaN or infinity are not JSON (core.finite), so
    they are unreadable, like any arguments that do not parse: kept raw."""
    if value is None or value == "":
        return {}, None
    if isinstance(value, Mapping):
        if find_non_finite(value) is not None:
            return None, json.dumps(value, default=str)
        return dict(value), None
    if isinstance(value, str):
        decoded = _decode(value)
        if isinstance(decoded, Mapping) and find_non_finite(decoded) is None:
            return dict(decoded), None
        return None, value
    return None, json.dumps(value, default=str)


def _content_text(content: Any) -> Any:
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return content


def read_openai_messages(messages: Sequence[Any], *, where: _Where | None = None) -> tuple[ToolCall, ...]:
    """Tool calls from OpenAI-format chat messages, in order, with their results."""
    w = where or _Where()
    calls: list[dict[str, Any]] = []
    results: dict[str, Any] = {}
    legacy: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or "role" not in m:
            raise w.error(f"message {i + 1} is not an object with a role", "tool_calls")
        if m["role"] == "assistant":
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") if isinstance(tc, Mapping) else None
                if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
                    raise w.error(f"message {i + 1}: a tool call has no function.name", "tool_calls",
                                  fix='{"id": "call_1", "type": "function", "function": {"name": "...", '
                                      '"arguments": "{...}"}}')
                calls.append({"name": fn["name"], "arguments": fn.get("arguments"), "id": tc.get("id")})
            fc = m.get("function_call")
            if isinstance(fc, Mapping) and isinstance(fc.get("name"), str):
                calls.append({"name": fc["name"], "arguments": fc.get("arguments"), "id": None})
                legacy.append(calls[-1])
        elif m["role"] == "tool" and m.get("tool_call_id") is not None:
            results[str(m["tool_call_id"])] = _decode(_content_text(m.get("content")))
        elif m["role"] == "function":
            for c in legacy:
                if c["name"] == m.get("name") and "result" not in c:
                    c["result"] = _decode(_content_text(m.get("content")))
                    break
    out = []
    for i, c in enumerate(calls):
        args, raw = _arguments(c["arguments"])
        cid = str(c["id"]) if c["id"] is not None else None
        has = (cid is not None and cid in results) or "result" in c
        result = results.get(cid) if cid is not None and cid in results else c.get("result")
        out.append(ToolCall(c["name"], args, result, cid, i, raw, has))
    return tuple(out)


def read_plain_calls(items: Sequence[Any], *, where: _Where | None = None) -> tuple[ToolCall, ...]:
    """Tool calls from ``[{"name", "arguments", "result"}, ...]``."""
    w = where or _Where()
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise w.error(f"call {i + 1} is not an object", "tool_calls")
        name = item.get("name", item.get("tool"))
        if not isinstance(name, str) or not name:
            raise w.error(f"call {i + 1} has no tool name", "tool_calls",
                          fix='{"name": "get_order", "arguments": {...}, "result": ...}')
        args, raw = _arguments(item.get("arguments", item.get("args", item.get("input"))))
        has = "result" in item or "output" in item
        result = _decode(item.get("result", item.get("output")))
        out.append(ToolCall(name, args, result, str(item["id"]) if item.get("id") is not None else None, i, raw, has))
    return tuple(out)


def _tool_spec(schema: Any, name: Any = None) -> ToolSpec | None:
    schema = _decode(schema)
    if isinstance(schema, Mapping):
        inner = schema.get("function")
        fn: Mapping[str, Any] = inner if isinstance(inner, Mapping) else schema
        fn_name = fn.get("name") or name
        if isinstance(fn_name, str):
            params = fn.get("parameters", fn.get("input_schema", fn.get("inputSchema")))
            return ToolSpec(fn_name, fn.get("description"), params if isinstance(params, Mapping) else None)
    return ToolSpec(name) if isinstance(name, str) else None


def read_openinference_spans(spans: Iterable[Any], *, where: _Where | None = None
                             ) -> tuple[tuple[ToolCall, ...], tuple[ToolSpec, ...] | None]:
    """(tool calls, declared tools or None) from OpenInference spans of one trace."""
    w = where or _Where()
    read = []
    for i, record in enumerate(spans):
        span = span_from_json(record, hex_ids=False) if isinstance(record, Mapping) else None
        if not isinstance(span, Span):
            raise w.error(f"span {i + 1} is not an object" if span is None else f"span {i + 1}: {span.reason}",
                          "tool_calls")
        read.append(span)
    return _span_calls(read, w)


def _span_calls(spans: Sequence[Span], w: _Where) -> tuple[tuple[ToolCall, ...], tuple[ToolSpec, ...] | None]:
    tools: dict[str, ToolSpec] = {}
    tool_spans: list[Span] = []
    requested: list[dict[str, Any]] = []
    results: dict[str, Any] = {}
    seen_ids: set[str] = set()
    for _, span in sorted(enumerate(spans), key=lambda item: (item[1].start_ns, item[0])):
        for _, tool in openinference.indexed(span.attributes, "llm.tools"):
            spec = _tool_spec(tool.get("tool.json_schema"), tool.get("tool.name"))
            if spec is not None:
                tools.setdefault(spec.name, spec)
        kind = openinference.kind(span)
        if kind == "TOOL":
            tool_spans.append(span)
        elif kind == "LLM":
            for message in openinference.messages(span, "output"):
                for _, call in openinference.indexed(message, "tool_calls"):
                    c = {k[len("tool_call."):]: v for k, v in call.items() if k.startswith("tool_call.")}
                    cid = c.get("id")
                    if cid is not None and str(cid) in seen_ids:
                        continue
                    if cid is not None:
                        seen_ids.add(str(cid))
                    requested.append(c)
            for message in openinference.messages(span, "input"):
                if message.get("role") == "tool" and message.get("tool_call_id") is not None:
                    results[str(message["tool_call_id"])] = _decode(message.get("content"))
    out: list[ToolCall] = []
    if tool_spans:
        for i, span in enumerate(tool_spans):
            attrs = span.attributes
            name = attrs.get("tool.name") or span.name
            if not isinstance(name, str) or not name:
                raise w.error(f"TOOL span {i + 1} has no tool.name", "tool_calls")
            args, raw = _arguments(attrs.get("input.value"))
            has = "output.value" in attrs
            cid = attrs.get("tool_call.id")
            out.append(ToolCall(name, args, _decode(attrs.get("output.value")), str(cid) if cid else None, i, raw,
                                has))
    else:
        for i, c in enumerate(requested):
            name = c.get("function.name")
            if not isinstance(name, str):
                raise w.error(f"tool call {i + 1} in an LLM span has no function.name", "tool_calls")
            args, raw = _arguments(c.get("function.arguments"))
            cid = str(c["id"]) if c.get("id") is not None else None
            out.append(ToolCall(name, args, results.get(cid) if cid else None, cid, i, raw,
                                cid is not None and cid in results))
    return tuple(out), (tuple(tools.values()) if tools else None)


def _kind(items: Sequence[Any]) -> str:
    dicts = [x for x in items if isinstance(x, Mapping)]
    if any("role" in x for x in dicts):
        return "openai"
    if any("attributes" in x or "span_id" in x or "context" in x for x in dicts):
        return "openinference"
    return "plain"


def read_tool_calls(value: Any, *, where: _Where | None = None
                    ) -> tuple[tuple[ToolCall, ...] | None, tuple[ToolSpec, ...] | None]:
    """(calls, tools found alongside them) from any of the three formats; (None, None) for
    no value (no calls recorded)."""
    w = where or _Where()
    if value is None:
        return None, None
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        return read_openai_messages(value["messages"], where=w), None
    if isinstance(value, Mapping) and isinstance(value.get("spans"), list):
        return read_openinference_spans(value["spans"], where=w)
    if not isinstance(value, list):
        raise w.error(f"tool_calls must be a list (OpenAI messages, OpenInference spans or "
                      f"{{name, arguments, result}} objects), got {type(value).__name__}", "tool_calls")
    kind = _kind(value)
    if kind == "openai":
        return read_openai_messages(value, where=w), None
    if kind == "openinference":
        return read_openinference_spans(value, where=w)
    return read_plain_calls(value, where=w), None


def read_tools(value: Any, *, where: _Where | None = None) -> tuple[ToolSpec, ...] | None:
    """Declared tools: OpenAI ``tools``, MCP ``tools/list`` items, names, or ``{"name", ...}``."""
    w = where or _Where()
    if value is None:
        return None
    if isinstance(value, Mapping) and isinstance(value.get("tools"), list):
        value = value["tools"]
    if not isinstance(value, list):
        raise w.error(f"tools must be a list, got {type(value).__name__}", "tools")
    out = []
    for i, item in enumerate(value):
        spec = _tool_spec(item) if isinstance(item, Mapping) else ToolSpec(item) if isinstance(item, str) else None
        if spec is None:
            raise w.error(f"tool {i + 1} has no name", "tools",
                          fix='a name, {"name": ...}, or {"type": "function", "function": {"name": ...}}')
        out.append(spec)
    return tuple(out)


def read_run(row: Mapping[str, Any], *, file: str | None = None, line: int | None = None) -> AgentRun:
    """One case from a dataset row: ``id``, ``question``, ``answer``, ``tool_calls`` (any of
    the three formats), ``tools``, ``criteria`` (a list of criterion objects), ``metadata``,
    ``calls_complete``."""
    rid = row.get("id")
    w = _Where(file, line, str(rid) if rid is not None else None)
    if not isinstance(rid, (str, int)) or isinstance(rid, bool) or str(rid) == "":
        raise w.error("each case needs an id", "id")
    calls, span_tools = read_tool_calls(row.get("tool_calls"), where=w)
    tools = read_tools(row.get("tools"), where=w) if row.get("tools") is not None else span_tools
    criteria = parse_criteria(row.get("criteria") or [], where=f"{file or 'case'} (id {rid})")
    for key in ("question", "answer"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise w.error(f"{key} must be a string", key)
    metadata = row.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise w.error("metadata must be an object", "metadata")
    return AgentRun(str(rid), row.get("question"), row.get("answer"), calls, tools, tuple(criteria), metadata,
                    bool(row.get("calls_complete", False)))


RUN_FIELDS = ("tool_calls", "tools", "criteria", "calls_complete")


def run_from_sample(sample: Sample, *, file: str | None = None) -> AgentRun:
    """A case from a dataset sample: ragmeter's dataset reader keeps the fields it does not
    know (``tool_calls``, ``tools``, ``criteria``, ``calls_complete``) in ``metadata``."""
    meta = dict(sample.metadata)
    row: dict[str, Any] = {"id": sample.id, "question": sample.question, "answer": sample.answer,
                           **{k: meta.pop(k) for k in RUN_FIELDS if k in meta}, "metadata": meta}
    return read_run(row, file=file)


def load_runs(path: str | Path) -> list[AgentRun]:
    """Cases from a JSONL file, one per line (see :func:`read_run`)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidInputError("no such file", file=str(path)) from None
    runs, ids = [], set()
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except ValueError as exc:
            raise InvalidInputError(f"not valid JSON ({exc})", file=str(path), line=n) from None
        if not isinstance(row, Mapping):
            raise InvalidInputError("each line must be a JSON object", file=str(path), line=n)
        run = read_run(row, file=str(path), line=n)
        if run.id in ids:
            raise InvalidInputError("a second case with this id", file=str(path), line=n, record=run.id, field="id")
        ids.add(run.id)
        runs.append(run)
    return runs


def read_spans_file(path: str | Path) -> dict[str, tuple[tuple[ToolCall, ...], tuple[ToolSpec, ...] | None]]:
    """OpenInference spans exported as JSONL, grouped by trace id: trace -> (calls, tools)."""
    p = Path(path)
    spans: list[Span] = []
    for n, raw in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError as exc:
            raise InvalidInputError(f"not valid JSON ({exc})", file=str(p), line=n) from None
        span = span_from_json(record, hex_ids=False)
        if isinstance(span, Rejected):
            raise InvalidInputError(span.reason, file=str(p), line=n, field=span.field)
        spans.append(span)
    return {t: _span_calls(s, _Where(str(p), None, t)) for t, s in group_traces(spans).items()}
