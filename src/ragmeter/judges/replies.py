"""Reading a judge's reply: tolerant JSON extraction, schema validation, keyed merging.

Never ``eval``: a reply is JSON (optionally inside a Markdown fence or surrounded by prose)
or it is invalid. Validation uses JSON Schema (``jsonschema``).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

import jsonschema

from ragmeter.core.finite import strict_loads

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def extract_json(text: str) -> Any:
    """The JSON value in ``text``; raises ``ValueError`` saying why there is none."""
    if text is None or not str(text).strip():
        raise ValueError("the reply is empty")
    text = str(text).strip()
    candidates = [text]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            return strict_loads(candidate)
        except json.JSONDecodeError:
            continue
        except ValueError as exc:  # NaN or Infinity (core.finite): not a value, so not a reply
            raise ValueError(f"the reply is not valid JSON: {exc} (write a number, or null)") from None
    raise ValueError("the reply is not valid JSON")


def schema_errors(value: Any, schema: dict) -> list[str]:
    """Every way ``value`` breaks ``schema``, as short readable lines."""
    validator = jsonschema.Draft202012Validator(schema)
    out = []
    for err in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        out.append(f"{where}: {err.message}")
    return out


@dataclass(frozen=True)
class Keyed:
    """A reply whose ``field`` is a list of items identified by ``key``, one per expected id.

    Valid items are kept across re-asks; a re-ask asks only for the missing ids.
    """

    field: str
    key: str
    expected: tuple

    def split(self, value: Any, schema: dict) -> tuple[dict, list]:
        """(valid items by id, ids still missing) from one reply."""
        item_schema = schema["properties"][self.field]["items"]
        found: dict = {}
        items = value.get(self.field) if isinstance(value, dict) else None
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get(self.key) in self.expected and not schema_errors(item, item_schema):
                found.setdefault(item[self.key], item)
        return found, [k for k in self.expected if k not in found]

    def merged(self, found: dict) -> dict:
        return {self.field: [found[k] for k in self.expected]}
