"""Decoding JSON from a user's file into a value, or a located ``InvalidInputError``.

``json.loads`` alone lets four things through as the wrong exception or as a poisoned value:
a document nested deeper than the interpreter's recursion limit (``RecursionError``), an
integer longer than Python's int-to-str limit of 4300 digits (a plain ``ValueError``), a lone
UTF-16 surrogate written as ``\\ud800`` (decodes, then fails the first time the text is
encoded: in a fingerprint, a ledger key, a report), and a number that becomes ``inf``. The
first three become a located error here; the last is left to the field validators, which
refuse non-finite numbers where a number is read.

Lines: only ``\\n`` ends a line (a ``\\r`` before it is whitespace). ``str.splitlines`` also
splits on U+2028, U+2029, U+0085, form feed and the other separators that may stand inside
a JSON string, so every JSONL reader here splits with :func:`split_lines`; a UTF-8 byte order
mark is dropped at the start of the file only, by every reader alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ragmeter.core.errors import InvalidInputError

BOM = "\ufeff"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def split_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` split on ``\\n`` only; a trailing empty piece is not a line.

    >>> list(split_lines('{"a": "x\\u2028y"}\\r\\n{"b": 1}\\n'))
    [(1, '{"a": "x\\u2028y"}\\r'), (2, '{"b": 1}')]
    """
    pieces = text.split("\n")
    if pieces and pieces[-1] == "":
        pieces.pop()
    return enumerate(pieces, start=1)


def decode_json(text: str, *, file: str, line: int | None = None, fix: str | None = None) -> Any:
    """The value of one JSON document (a whole file, or one line of a JSONL file when ``line``
    is given), or an ``InvalidInputError`` naming the file, the line and what is wrong.

    >>> decode_json('[' * 100_000, file="d.jsonl", line=3)
    Traceback (most recent call last):
    ...
    ragmeter.core.errors.InvalidInputError: d.jsonl, line 3: JSON nested too deeply ...
    >>> decode_json('{"id": "\\\\ud800"}', file="d.jsonl", line=1)
    Traceback (most recent call last):
    ...
    ragmeter.core.errors.InvalidInputError: d.jsonl, line 1: a string holds a lone UTF-16 surrogate ...
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise InvalidInputError(f"not valid JSON ({exc.msg} at column {exc.colno})", file=file, line=where,
                                fix=fix or ("write one complete JSON object per line" if line is not None
                                            else None)) from None
    except RecursionError:
        raise InvalidInputError("JSON nested too deeply (past Python's recursion limit)", file=file, line=line,
                                fix="flatten the data: ragmeter reads a few levels of nesting") from None
    except ValueError as exc:  # int('9' * 5000): Python's limit on digits in an integer
        raise InvalidInputError(f"a number is too long to read ({_digits_message(exc)})", file=file, line=line,
                                fix="write numbers with at most 4300 digits (ids as strings)") from None
    if _SURROGATE_ESCAPE.search(text) and has_lone_surrogate(value):
        raise InvalidInputError("a string holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), "
                                "which is not Unicode text", file=file, line=line,
                                fix="write the character itself, or a complete surrogate pair") from None
    return value


def _digits_message(exc: ValueError) -> str:
    text = str(exc)
    return text.split(";")[0] if "digits" in text else text


def has_lone_surrogate(value: Any) -> bool:
    """True when some string (or key) inside ``value`` cannot be encoded as UTF-8. Iterative,
    so a deep value cannot overflow the stack."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
