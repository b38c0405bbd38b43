"""Reading a server's envelope (the JSON around a judge's answer), trusting nothing in it.

An OpenAI chat completion is ``{"choices": [{"message": {"content": str}, "finish_reason": ...}],
"usage": {"prompt_tokens": int, "completion_tokens": int}}``; an Anthropic message is
``{"content": [{"type": "tool_use", "input": {...}} | {"type": "text", "text": str}],
"stop_reason": ..., "usage": {"input_tokens": int, "output_tokens": int}}``. Anything else (a
body that is not JSON, an HTML page with status 200, JSON nested too deep to read, a message
that is a string, token counts that are words, a usage that is a list) raises
:class:`~ragmeter.judges.transport.JudgeReplyError`: that one item fails, nothing is stored,
and a rerun asks again. A missing ``usage`` is read as zero tokens (many local servers omit it).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from ragmeter.judges.transport import JudgeReplyError

SNIPPET = 200  # characters of a bad body quoted in the error


@dataclass(frozen=True)
class Envelope:
    text: str
    input_tokens: int
    output_tokens: int
    truncated: bool
    logprobs: list | None = None


def _bad(backend: str, what: str, body: str) -> JudgeReplyError:
    snippet = " ".join(body[:SNIPPET].split())
    return JudgeReplyError(f"{backend}: the server's reply is not a valid {what}"
                           f"{': ' + repr(snippet) if snippet else ''}; nothing was stored, a rerun asks again")


def read_body(backend: str, content: bytes) -> Any:
    """The JSON body, or ``JudgeReplyError`` (not JSON, not UTF-8, nested too deep)."""
    try:
        return json.loads(content)
    except (ValueError, RecursionError) as exc:
        body = content[:SNIPPET].decode("utf-8", "replace")
        why = "nested too deep" if isinstance(exc, RecursionError) else "not JSON"
        raise _bad(backend, f"JSON body ({why})", body) from None


def _tokens(backend: str, usage: Any, name: str, body: str) -> int:
    value = usage.get(name) if usage is not None else None
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0 \
            or value > 2 ** 53 or int(value) != value:
        raise _bad(backend, f"envelope (usage.{name} is {type(value).__name__} {str(value)[:40]!r}, "
                            f"not a token count)", body)
    return int(value)


def _usage(backend: str, data: dict, body: str) -> Any:
    usage = data.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise _bad(backend, f"envelope (usage is a {type(usage).__name__}, not an object)", body)
    return usage


def _text_parts(parts: list) -> str | None:
    """Content given as a list of parts (``[{"type": "text", "text": ...}]``), joined; None if not that."""
    out = []
    for p in parts:
        if not isinstance(p, dict) or not isinstance(p.get("text", ""), str):
            return None
        out.append(p.get("text", ""))
    return "".join(out)


def openai(content: bytes, backend: str = "openai") -> Envelope:
    """A chat completion's first choice."""
    data = read_body(backend, content)
    body = content[:SNIPPET].decode("utf-8", "replace")
    if not isinstance(data, dict):
        raise _bad(backend, "chat completion (not an object)", body)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _bad(backend, "chat completion (no choices)", body)
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise _bad(backend, f"chat completion (choices[0].message is a {type(message).__name__})", body)
    text = message.get("content")
    if isinstance(text, list):
        text = _text_parts(text)
        if text is None:
            raise _bad(backend, "chat completion (message content parts without text)", body)
    elif text is None:
        text = ""
    elif not isinstance(text, str):
        raise _bad(backend, f"chat completion (message content is a {type(text).__name__})", body)
    usage = _usage(backend, data, body)
    raw_lp = choice.get("logprobs")
    logprobs = raw_lp.get("content") if isinstance(raw_lp, dict) else None
    return Envelope(text, _tokens(backend, usage, "prompt_tokens", body),
                    _tokens(backend, usage, "completion_tokens", body),
                    truncated=choice.get("finish_reason") == "length",
                    logprobs=logprobs if isinstance(logprobs, list) else None)


def anthropic(content: bytes, backend: str = "anthropic") -> Envelope:
    """A Messages reply: the forced tool call's input as JSON text, else the text blocks."""
    data = read_body(backend, content)
    body = content[:SNIPPET].decode("utf-8", "replace")
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        raise _bad(backend, "message (no content list)", body)
    blocks = data["content"]
    if not all(isinstance(b, dict) for b in blocks):
        raise _bad(backend, "message (a content block is not an object)", body)
    tool = next((b for b in blocks if b.get("type") == "tool_use"), None)
    if tool is not None:
        try:
            text = json.dumps(tool.get("input"))
        except (ValueError, TypeError, RecursionError):
            raise _bad(backend, "message (tool input cannot be read)", body) from None
    else:
        texts = [b.get("text", "") for b in blocks]
        if not all(isinstance(t, str) for t in texts):
            raise _bad(backend, "message (a text block's text is not a string)", body)
        text = "".join(texts)
    usage = _usage(backend, data, body)
    return Envelope(text, _tokens(backend, usage, "input_tokens", body), _tokens(backend, usage, "output_tokens", body),
                    truncated=data.get("stop_reason") == "max_tokens")
