"""``EvaluationResult.to_dict()`` as indented JSON text, fast: the same characters as
``json.dumps(doc, indent=2, ensure_ascii=False)``.

Python's json module writes indented JSON with its pure-Python encoder (the C one cannot
indent): 1.4 s for the 250,000 cells of 50,000 samples x 5 measures. Here each sample row of
the usual shape (an id and cells of status, value and a reason or error) is written from a
template, its strings escaped by the C encoder's string function and its floats written as
json writes them (``float.__repr__``; ``NaN``, ``Infinity``); anything else (a row with
evidence, an unusual value) and the rest of the document go through ``json.dumps`` itself,
re-indented to their depth (nested indented JSON is the standalone text with each new line
indented further).

>>> doc = {"dataset": {"path": None}, "metrics": {}, "samples": [
...     {"id": "q1", "metrics": {"mrr@5": {"status": "scored", "value": 0.5}}}]}
>>> result_json(doc) == json.dumps(doc, indent=2, ensure_ascii=False)
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring  # the C function when built
from typing import Any

from ragmeter.core.evaluation import EvaluationResult, outcome_cell
from ragmeter.core.results import Outcome, Score
from ragmeter.core.score_column import ScoreColumn

_CELL_KEYS = {("status", "value"), ("status", "value", "reason"), ("status", "value", "error")}


def result_text(result: EvaluationResult) -> str:
    """``json.dumps(result.to_dict(), indent=2, ensure_ascii=False)``, the sample rows written
    column by column straight from the outcomes (no cell dicts)."""
    ids = result.sample_ids
    if result.evidence is not None or not ids or not result.measures or not all(type(i) is str for i in ids):
        return result_json(result.to_dict())
    # one %-template per row: each measure's slot is its cell's whole text, or for a column
    # scored everywhere with finite values, the cell's fixed text around the value
    slots, texts = [], []
    for m in result.measures:
        key, outcomes = encode_basestring(str(m)), result.outcomes[m]
        values = outcomes.values.tolist() if isinstance(outcomes, ScoreColumn) and outcomes.all_scored else None
        if values is not None and all(map(math.isfinite, values)):
            slots.append(f'        {key}: {{\n          "status": "scored",\n          "value": '.replace("%", "%%")
                         + "%s\n        }")
            texts.append(list(map(float.__repr__, values)))
        else:
            slots.append("%s")
            texts.append(_cells(key, outcomes))
    template = '    {\n      "id": %s,\n      "metrics": {\n' + ",\n".join(slots) + "\n      }\n    }"
    rows = ",\n".join([template % cells for cells in zip(map(encode_basestring, ids), *texts)])
    parts = []
    for key, value in result.to_dict(samples=False).items():
        text = f"[\n{rows}\n  ]" if key == "samples" else _nested(value, "  ")
        parts.append(f"  {encode_basestring(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}"


def _cells(key: str, outcomes: Sequence[Outcome]) -> list[str]:
    """Each outcome's cell as written inside its row (``key``: the measure name's JSON)."""
    head, tail = f'        {key}: {{\n          "status": "scored",\n          "value": ', "\n        }"
    isfinite = math.isfinite
    if isinstance(outcomes, ScoreColumn):  # from the arrays: an outcome is built only where not scored
        scored = outcomes.scored.tolist()
        return [head + float.__repr__(v) + tail if ok and isfinite(v)
                else f"        {key}: {_nested(outcome_cell(outcomes[i]), '        ')}"
                for i, (v, ok) in enumerate(zip(outcomes.values.tolist(), scored))]
    return [head + float.__repr__(o.value) + tail if type(o) is Score and type(o.value) is float and isfinite(o.value)
            else f"        {key}: {_nested(outcome_cell(o), '        ')}" for o in outcomes]


def result_json(doc: Mapping[str, Any]) -> str:
    """``json.dumps(doc, indent=2, ensure_ascii=False)``, with the ``samples`` rows templated."""
    if not isinstance(doc, dict) or not doc or not all(isinstance(k, str) for k in doc):
        return json.dumps(doc, indent=2, ensure_ascii=False)
    parts = []
    for key, value in doc.items():
        text = _samples(value) if key == "samples" else _nested(value, "  ")
        parts.append(f"  {encode_basestring(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}"


def _nested(value: Any, indent: str) -> str:
    """``value`` as indented JSON written at a depth whose lines start with ``indent``."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def _samples(rows: Any) -> str:
    if not isinstance(rows, list) or not rows:
        return _nested(rows, "  ")
    keys: dict[str, str] = {}  # measure name -> its JSON text, made once
    return "[\n" + ",\n".join("    " + (_row(row, keys) or _nested(row, "    ")) for row in rows) + "\n  ]"


def _row(row: Any, keys: dict[str, str]) -> str | None:
    """One sample's row at depth 2 (inside ``samples``), or None when it is not of the usual shape."""
    if type(row) is not dict or tuple(row) != ("id", "metrics") or type(row["id"]) is not str \
            or type(row["metrics"]) is not dict:
        return None
    cells = []
    for name, cell in row["metrics"].items():
        if type(name) is not str or type(cell) is not dict or tuple(cell) not in _CELL_KEYS \
                or type(cell["status"]) is not str:
            return None
        value = _number(cell["value"])
        if value is None:
            return None
        key = keys.get(name) or keys.setdefault(name, encode_basestring(name))
        text = (f'        {key}: {{\n          "status": {encode_basestring(cell["status"])},\n'
                f'          "value": {value}')
        if len(cell) == 3:
            extra = cell.get("reason", cell.get("error"))
            if type(extra) is not str:
                return None
            text += f',\n          "{"reason" if "reason" in cell else "error"}": {encode_basestring(extra)}'
        cells.append(text + "\n        }")
    metrics = "{\n" + ",\n".join(cells) + "\n      }" if cells else "{}"
    return f'{{\n      "id": {encode_basestring(row["id"])},\n      "metrics": {metrics}\n    }}'


def _number(value: Any) -> str | None:
    """A cell's value as json writes it (None: not a float, an int or null)."""
    if value is None:
        return "null"
    if type(value) is float:
        if math.isfinite(value):
            return float.__repr__(value)
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if type(value) is int:
        return int.__repr__(value)
    return None
