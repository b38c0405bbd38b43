"""The exact line readers and their one-pass fast paths read every file alike, and refuse what
trec_eval refuses (the fast paths hand anything unusual to the exact readers)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.trec.errors import TrecInputError
from ragmeter.trec.lines import _qrels_fast, qrels_lines, qrels_rows, run_lines, run_rows, run_rows_fast

FIELD = st.sampled_from(["1", "q2", "d-3", "caf\u00e9", "#x", "a\x1cb", "+4", "-2", "07", "1.5", "nan", "1e3", "inf",
                         "9" * 20])
SEP = st.sampled_from([" ", "\t", "  ", " \r", "\x0b"])


@st.composite
def text_files(draw, fields: int):
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        parts = [draw(FIELD) for _ in range(draw(st.sampled_from([fields] * 6 + [fields - 1, fields + 1, 0])))]
        lines.append(draw(SEP).join(parts))
    if draw(st.booleans()):
        lines.insert(0, "# comment")
    return "\n".join(lines) + draw(st.sampled_from(["\n", ""]))


def _outcome(fn):
    try:
        return fn()
    except TrecInputError as exc:
        return f"refused: {exc}"


SETTINGS = settings(max_examples=300, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.slow
@SETTINGS
@given(text_files(4))
def test_qrels_fast_path_reads_what_the_exact_reader_reads(tmp_path, text):
    path = tmp_path / "q"
    path.write_bytes(text.encode())
    fast = _qrels_fast(text.encode())
    exact = _outcome(lambda: qrels_rows(str(path), iters=True))  # iters: always the exact reader
    if fast is not None:
        assert (fast[0], fast[2], fast[3]) == (exact[0], exact[2], exact[3])
    assert _outcome(lambda: qrels_rows(str(path)))[::2] == exact[::2]


@pytest.mark.slow
@SETTINGS
@given(text_files(6))
def test_run_fast_path_reads_what_the_exact_reader_reads(tmp_path, text):
    path = tmp_path / "r"
    path.write_bytes(text.encode())
    fast = run_rows_fast(str(path))
    exact = _outcome(lambda: [(q, d, s) for q, d, s, _ in run_rows(run_lines(str(path)), str(path))])
    if fast is not None:
        assert fast[0] == exact


def test_the_line_after_a_comment_is_always_a_judgment(tmp_path):
    path = tmp_path / "q"
    path.write_text("# one\n# two\n1 0 d 1\n")
    with pytest.raises(TrecInputError, match="line 2: expected 4 fields.*two comment lines in a row"):
        list(qrels_lines(str(path)))
    path.write_text("# one\n# 0 x 1\n")  # four fields: trec_eval reads it as a judgment of topic '#'
    assert [p for _, p in qrels_lines(str(path))] == [[b"#", b"0", b"x", b"1"]]
