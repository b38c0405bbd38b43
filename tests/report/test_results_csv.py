"""``ragmeter.report.results_csv``: Per-sample results as CSV: one row per (sample, metric), long format."""

from __future__ import annotations

import csv
import io
import json

import pytest

EVIL_IDS = ["q\x1b]0;pwned\x07", "[red]x[/red]", "=HYPERLINK(\"http://evil\",\"y\")", "a\rb\u202ec", "@SUM(1)"]


@pytest.fixture
def evil_data(tmp_path):
    p = tmp_path / "evil.jsonl"
    rows = [{"id": sid, "question": "Q?", "retrieved": ["a", "b"], "relevant": ["a"], "answer": "x",
             "metadata": {"expected_format": {"regex": "x"}}} for sid in EVIL_IDS]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_csv_output_neutralises_formula_cells(cli, evil_data):
    out = cli("eval", evil_data, "--no-save", "--judge", "none", "-m", "recall", "--format", "csv")
    assert out.exit_code == 0, out.output
    rows = list(csv.reader(io.StringIO(out.stdout)))
    ids = [r[0] for r in rows[1:]]
    assert "'=HYPERLINK(\"http://evil\",\"y\")" in ids and "'@SUM(1)" in ids
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for cell in row
                   if not cell.lstrip("+-").replace(".", "", 1).isdigit())


def test_csv_output(cli, warranty):
    out = cli("eval", warranty / "dataset.jsonl", "--format", "csv", "--metrics", "recall", "--no-save").stdout
    lines = out.splitlines()
    assert lines[0] == "sample_id,metric,status,value,reason" and len(lines) == 7
    assert lines[1].startswith("q1,recall@5,scored,0.666")
