"""What a run must hold to be read whole: the checks every reader of a run shares.

:func:`ragmeter.runs.store.load_run` calls these, so ``gate``, ``compare``, ``correlate``,
``report``, ``show`` and ``agreement`` all refuse the same damaged runs, with the file, the
line and the field, instead of a traceback or a verdict on part of the data:

- every cell of ``results.jsonl``: a status of ``scored`` (with a finite number as its value),
  ``not_computed`` or ``failed`` (with no value); a string, a boolean, NaN or infinity is
  refused wherever it is;
- a run marked complete has both ``results.jsonl`` and ``summary.json``, no sample id twice,
  and per metric as many cells of each status as ``summary.json`` counts (a file cut short,
  or lines deleted, no longer agree with it).

A run that is not complete (running, interrupted) is read as far as it got; a verdict on it is
refused by the gate (:func:`ragmeter.analysis.gate.gate`), since it does not hold every sample.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragmeter.core.errors import InvalidInputError

STATUSES = ("scored", "not_computed", "failed")
FIX = ("rerun it (`ragmeter eval --resume RUN` on a run that did not complete, or `ragmeter eval` again), or "
       "delete the run directory")


def damaged(path: Path, problem: str, *, line: int | None = None, record: str | None = None,
            field: str | None = None) -> InvalidInputError:
    return InvalidInputError(f"the run file is damaged: {problem}", file=str(path), line=line, record=record,
                             field=field, fix=FIX)


def finite(x: Any) -> bool:
    """A number that is not a boolean, NaN or infinite."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_row(path: Path, line: int, row: dict) -> None:
    """Each cell of one results.jsonl line: a known status, and a finite value exactly when scored."""
    for name, cell in row["metrics"].items():
        status, value = cell["status"], cell.get("value")
        where = {"line": line, "record": row["id"], "field": f"metrics.{name}"}
        if status not in STATUSES:
            raise damaged(path, f'status {status!r} is not one of {", ".join(STATUSES)}', **where)
        if status == "scored" and not finite(value):
            shown = repr(value)[:40]
            raise damaged(path, f"a scored value must be a finite number, got {shown}", **where)
        if status != "scored" and value is not None:
            raise damaged(path, f"a {status} cell has no value, got {repr(value)[:40]}", **where)


def check_whole(path: Path, results: Sequence[dict], summary: dict, *, complete: bool) -> None:
    """A complete run's files agree: both present, no id twice, per metric the counts of
    summary.json equal the cells of results.jsonl."""
    results_file, summary_file = path / "results.jsonl", path / "summary.json"
    if not complete:
        return
    for f in (results_file, summary_file):
        if not f.is_file():
            raise damaged(f, f"the run is marked complete but {f.name} is missing")
    seen: dict[str, int] = {}
    for number, row in enumerate(results, start=1):
        if row["id"] in seen:
            raise damaged(results_file, f"sample id {row['id']!r} appears twice (result {seen[row['id']]} and "
                                        f"{number})", record=row["id"], field="id")
        seen[row["id"]] = number
    held: dict[str, Counter] = {}
    for row in results:
        for name, cell in row["metrics"].items():
            held.setdefault(name, Counter())[cell["status"]] += 1
    for name in held.keys() - summary.keys():
        raise damaged(summary_file, f'results.jsonl holds metric "{name}", which summary.json does not list',
                      field=name)
    for name, m in summary.items():
        counted = {s: m[s] for s in STATUSES}
        found = {s: held.get(name, Counter())[s] for s in STATUSES}
        if counted != found:
            said = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counted.items())
            got = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in found.items())
            raise damaged(results_file, f'summary.json counts {sum(counted.values())} samples for "{name}" '
                                        f"({said}) but results.jsonl holds {sum(found.values())} ({got}): the file "
                                        f"was cut short or changed", field=name)
