"""Issue 17, item 10 (terminal half): text from data never drives the terminal or a spreadsheet.

An id carrying ESC sequences, a carriage return, a bidi override or rich markup (``[red]x``)
prints escaped and literally in the table, ``show``, ``runs``, ``diagnose``, ``compare`` and
error messages; CSV output puts a ``'`` before cells a spreadsheet would run as a formula.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from ragmeter.core.display import spreadsheet_safe, terminal_safe
from ragmeter.runs import list_runs

EVIL_IDS = ["q\x1b]0;pwned\x07", "[red]x[/red]", "=HYPERLINK(\"http://evil\",\"y\")", "a\rb\u202ec", "@SUM(1)"]


@pytest.fixture
def evil_data(tmp_path):
    p = tmp_path / "evil.jsonl"
    rows = [{"id": sid, "question": "Q?", "retrieved": ["a", "b"], "relevant": ["a"], "answer": "x",
             "metadata": {"expected_format": {"regex": "x"}}} for sid in EVIL_IDS]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _clean(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text and "\u202e" not in text, repr(text)


def test_terminal_safe_escapes_every_control_character():
    for code in [*range(0x00, 0x20), *range(0x7f, 0xa0), 0x202a, 0x202e, 0x2066, 0x2069, 0x200f]:
        out = terminal_safe(f"a{chr(code)}b")
        assert out.isprintable() and out.startswith("a\\") and out.endswith("b"), (hex(code), out)
    assert terminal_safe("plain ids, ünïcode and [brackets]") == "plain ids, ünïcode and [brackets]"


def test_table_show_runs_and_diagnose_print_ids_escaped_and_literally(cli, evil_data, runs_dir):
    out = cli("eval", evil_data, "--judge", "none", "-m", "recall,precision")
    assert out.exit_code == 0, out.output
    _clean(out.stdout)
    assert "q\\x1b]0;pwned\\x07" in out.stdout and "[red]x[/red]" in out.stdout
    (run,) = list_runs(runs_dir)
    for args in (["show", run.path], ["runs", runs_dir], ["diagnose", run.path]):
        shown = cli(*args)
        assert shown.exit_code == 0, shown.output
        _clean(shown.stdout)
    assert "[red]x[/red]" in cli("diagnose", run.path).stdout
    cmp = cli("compare", run.path, run.path)
    assert cmp.exit_code == 0, cmp.output
    _clean(cmp.stdout)


def test_rich_tables_never_parse_markup_from_data(cli, evil_data, runs_dir, tmp_path):
    assert cli("eval", evil_data, "--judge", "none", "-m", "recall", "--name", "a").exit_code == 0
    worse = tmp_path / "worse.jsonl"
    worse.write_text(evil_data.read_text().replace('["a", "b"]', '["c", "b"]'))
    assert cli("eval", worse, "--judge", "none", "-m", "recall", "--name", "b").exit_code == 0
    a, b = sorted(list_runs(runs_dir), key=lambda r: r.name)
    out = cli("compare", a.path, b.path)
    assert out.exit_code == 0, out.output
    assert "[red]x[/red] -1.00" in out.stdout, out.stdout  # the mover's id, printed literally
    _clean(out.stdout)


def test_error_messages_escape_the_id(cli, tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps({"id": "q\x1b[2J", "retrieved": "a,b"}) + "\n")
    out = cli("eval", p, "--no-save", "--judge", "none")
    assert out.exit_code == 2 and "q\\x1b[2J" in out.output
    _clean(out.output)


def test_csv_output_neutralises_formula_cells(cli, evil_data):
    out = cli("eval", evil_data, "--no-save", "--judge", "none", "-m", "recall", "--format", "csv")
    assert out.exit_code == 0, out.output
    rows = list(csv.reader(io.StringIO(out.stdout)))
    ids = [r[0] for r in rows[1:]]
    assert "'=HYPERLINK(\"http://evil\",\"y\")" in ids and "'@SUM(1)" in ids
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for cell in row
                   if not cell.lstrip("+-").replace(".", "", 1).isdigit())


@pytest.mark.parametrize("cell,expected", [
    ("=1+1", "'=1+1"), ("+1 (555)", "'+1 (555)"), ("-cmd", "'-cmd"), ("@x", "'@x"), ("\tx", "'\tx"),
    ("\rx", "'\rx"), ("-0.5", "-0.5"), ("+3", "+3"), ("1e-3", "1e-3"), ("q1", "q1"), ("", ""),
])
def test_spreadsheet_safe(cell, expected):
    assert spreadsheet_safe(cell) == expected
