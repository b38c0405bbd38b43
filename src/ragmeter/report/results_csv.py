"""Per-sample results as CSV: one row per (sample, metric), long format.

    sample_id,metric,status,value,reason
    q1,recall@5,scored,0.6666666666666666,

``value`` is Python's ``repr`` of the float (round-trips exactly), empty when not scored;
``reason`` is why a value is not computed, or the error of a failed one. A text cell that a
spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, CR first) gets a leading
``'`` (OWASP CSV injection; :func:`~ragmeter.core.display.spreadsheet_safe`).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ragmeter.core.display import spreadsheet_safe
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.io.writer import write_text_atomic

HEADER = ("sample_id", "metric", "status", "value", "reason")


def results_csv(result: EvaluationResult) -> str:
    """The CSV text (header included, ``\\r\\n`` line ends as the csv module writes them)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(HEADER)
    for row in result.to_dict()["samples"]:
        for metric, cell in row["metrics"].items():
            writer.writerow([spreadsheet_safe(row["id"]), spreadsheet_safe(metric), cell["status"],
                             "" if cell["value"] is None else repr(cell["value"]),
                             spreadsheet_safe(cell.get("reason") or cell.get("error") or "")])
    return buf.getvalue()


def write_results_csv(result: EvaluationResult, path: str) -> None:
    """Write :func:`results_csv` to ``path`` (atomically: a temporary file, then a rename)."""
    write_text_atomic(Path(path), results_csv(result))
