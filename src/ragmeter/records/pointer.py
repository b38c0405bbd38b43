"""JSON Pointer (RFC 6901) look-ups into a decoded JSON document.

>>> resolve({"items": [{"sku": "R2"}]}, "/items/0/sku")
'R2'
>>> resolve({"a/b": 1}, "/a~1b")
1
>>> resolve({"a": 1}, "/b") is MISSING
True
"""

from __future__ import annotations

from typing import Any

from ragmeter.core.errors import InvalidParameterError
from ragmeter.records.types import CannotVerify, LookupOutcome, RecordValue


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # what a pointer into a document that lacks its path resolves to


def check_pointer(pointer: str) -> str:
    """``pointer`` if it is a JSON Pointer ("" or starting with "/"), else a typed error."""
    if pointer and not pointer.startswith("/"):
        raise InvalidParameterError(f"{pointer!r} is not a JSON Pointer: it must be empty or start with '/' "
                                    f"(e.g. '/status' or '/items/0/sku')")
    return pointer


def tokens(pointer: str) -> list[str]:
    check_pointer(pointer)
    if pointer == "":
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def resolve(document: Any, pointer: str) -> Any:
    """The value at ``pointer`` in ``document``, or ``MISSING`` when the path is absent."""
    node = document
    for token in tokens(pointer):
        if isinstance(node, dict):
            if token not in node:
                return MISSING
            node = node[token]
        elif isinstance(node, list):
            if not token.isdigit() or (len(token) > 1 and token.startswith("0")) or int(token) >= len(node):
                return MISSING
            node = node[int(token)]
        else:
            return MISSING
    return node


def record_from_json(node: Any, *, entity: str, attribute: str, where: str) -> LookupOutcome:
    """A found JSON value as a lookup outcome.

    A scalar is the value; ``{"value": v, "unit": u}`` is a value with its unit; ``MISSING``
    or ``null`` is "no record"; any other object or a list cannot be compared with a stated
    fact, so it is an error that names the pointer to fix.
    """
    if node is MISSING or node is None:
        return CannotVerify(f"{where} has no {attribute!r} for {entity!r}", "no_record")
    if isinstance(node, dict) and "value" in node and set(node) <= {"value", "unit"}:
        unit = node.get("unit")
        inner = node["value"]
        if isinstance(inner, (str, int, float, bool)) and (unit is None or isinstance(unit, str)):
            return RecordValue(inner, unit or None)
    if isinstance(node, (str, int, float, bool)):
        return RecordValue(node)
    kind = "a list" if isinstance(node, list) else "an object"
    return CannotVerify(f"{where}: {attribute!r} of {entity!r} is {kind}, not one value; point at a single "
                        f"value (e.g. '/{attribute}/0/name')", "error")
