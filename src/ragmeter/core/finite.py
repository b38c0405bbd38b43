"""One rule for numbers read from outside ragmeter: NaN and infinity are not values.

Python's ``json`` reads ``NaN``, ``Infinity`` and ``-Infinity`` (they are not JSON: RFC 8259,
section 6), a Python function may return ``float("nan")``, and a CSV or a spreadsheet export
writes ``nan`` or ``inf``. Compared as a value, NaN equals nothing, so a fact checked against
a NaN record would *fail*, and a NaN score would poison a mean. So, wherever a value comes
from outside (a record source's reply, a ``python:`` function's return, a tool call's
arguments or result in a trace, a judge's reply):

- a record value that is not finite is cannot-verify, with the reason (never cached);
- a comparison with a non-finite value on either side is undecidable (cannot-verify or
  unable-to-verify, never a pass or a fail);
- call arguments holding one are unreadable (as arguments that are not JSON);
- a judge reply holding one is not valid JSON (the judge is asked again).

>>> non_finite(float("nan")), non_finite("-Infinity"), non_finite(" inf "), non_finite(1e308), non_finite("Info")
(True, True, True, False, False)
>>> find_non_finite({"a": [1, {"b": float("inf")}]})
'/a/1/b'
"""

from __future__ import annotations

import json
import math
from typing import Any

#: What a reason says about such a value.
NOT_FINITE = "not a finite number (NaN or infinity)"
_SPELLED = frozenset(sign + word for sign in ("", "+", "-") for word in ("nan", "inf", "infinity"))


def non_finite(value: Any) -> bool:
    """Whether ``value`` is NaN or an infinity: a float, or a short string that spells one
    (``"NaN"``, ``"-inf"``, ``"Infinity"``, as CSV and spreadsheet exports write them)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, str) and len(value) <= 12:
        return value.strip().casefold() in _SPELLED
    return False


def find_non_finite(value: Any, path: str = "", depth: int = 0) -> str | None:
    """The JSON Pointer of the first non-finite float inside a JSON-like value, or None."""
    if isinstance(value, float):
        return path if not math.isfinite(value) else None
    if depth > 200:
        return None
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = find_non_finite(item, f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}", depth + 1)
        if found is not None:
            return found
    return None


def _refuse(word: str) -> Any:
    raise ValueError(f"{word} is not JSON")


def strict_loads(text: str | bytes) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity`` (a ``ValueError``)."""
    return json.loads(text, parse_constant=_refuse)
