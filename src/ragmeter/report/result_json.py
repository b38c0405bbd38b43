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
from collections.abc import Iterator, Mapping, Sequence
from json.encoder import encode_basestring  # the C function when built
from typing import Any

import numpy as np

from ragmeter.core.evaluation import EvaluationResult, outcome_cell
from ragmeter.core.results import Outcome, Score
from ragmeter.core.score_column import ScoreColumn

_CELL_KEYS = {("status", "value"), ("status", "value", "reason"), ("status", "value", "error")}


#: Sample rows written (and handed to the caller) at a time: the text of one batch is held, not the file's.
ROWS = 20_000

_ROW = '    {\n      "id": '
_NEXT_ROW = "\n      }\n    },\n" + _ROW
_METRICS = ',\n      "metrics": {\n'


def result_text(result: EvaluationResult) -> str:
    """``json.dumps(result.to_dict(), indent=2, ensure_ascii=False)``, the sample rows written
    column by column straight from the outcomes (no cell dicts)."""
    return "".join(result_chunks(result))


def result_chunks(result: EvaluationResult) -> Iterator[str]:
    """:func:`result_text` in pieces: the head, the sample rows ``ROWS`` at a time, the tail.

    A row is its id and each measure's cell: for a column of finite scores the cell's fixed
    text and the value's (``float.__repr__``, written once per distinct value), for any other
    column the cell's whole text. The pieces of a batch of rows go into one list a column at a
    time (each column into every w-th slot, by a slice assignment) and are joined once."""
    ids = result.sample_ids
    if result.evidence is not None or not ids or not result.measures or not all(type(i) is str for i in ids):
        yield result_json(result.to_dict())
        return
    parts = [(key, f"  {encode_basestring(key)}: {_nested(value, '  ')}")
             for key, value in result.to_dict(samples=False).items()]
    at = [key for key, _ in parts].index("samples")
    yield "{\n" + "".join(text + ",\n" for _, text in parts[:at]) + '  "samples": [\n'
    columns = [_column(encode_basestring(str(m)), result.outcomes[m], j == 0) for j, m in enumerate(result.measures)]
    width = 2 + 2 * len(columns)
    for start in range(0, len(ids), ROWS):
        part = slice(start, start + ROWS)
        n = len(ids[part])
        pieces: list[str] = [""] * (width * n)
        pieces[0::width] = [_NEXT_ROW] * n
        pieces[1::width] = list(map(encode_basestring, ids[part]))
        for j, (before, texts) in enumerate(columns):
            pieces[2 + 2 * j::width] = [before] * n
            pieces[3 + 2 * j::width] = texts[part]
        if start == 0:
            pieces[0] = _ROW
        yield "".join(pieces)
    yield "\n      }\n    }\n  ]" + "".join(",\n" + text for _, text in parts[at + 1:]) + "\n}"


def _column(key: str, outcomes: Sequence[Outcome], first: bool) -> tuple[str, list[str]]:
    """A measure's cells: (the text before each, each one's own text)."""
    before = _METRICS if first else ",\n"
    if isinstance(outcomes, ScoreColumn) and outcomes.all_scored:
        values = outcomes.values
        if bool(np.isfinite(values).all()):
            head = f'        {key}: {{\n          "status": "scored",\n          "value": '
            return before + head, _reprs(values, "\n        }")
    return before, _cells(key, outcomes)


def _reprs(values: np.ndarray, tail: str) -> list[str]:
    """``float.__repr__`` of each value and ``tail``, made once per distinct value (and for each
    value where a zero is negative: ``-0.0 == 0.0``)."""
    if bool((values == 0).any() and np.signbit(values[values == 0]).any()):
        return [float.__repr__(v) + tail for v in values.tolist()]
    distinct, inverse = np.unique(values, return_inverse=True)
    texts = np.array([float.__repr__(v) + tail for v in distinct.tolist()], dtype=object)
    out: list[str] = texts[inverse].tolist()
    return out


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
