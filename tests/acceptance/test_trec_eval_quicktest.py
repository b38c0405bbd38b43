"""trec_eval 10.0's own ``make quicktest``: its 14 lines, run as ``ragmeter trec`` with the same
options, print trec_eval's expected output byte for byte.

The lines and files are those of ``tests/data/trec_eval/README.md`` (trec_eval's ``test/``
folder, copied unchanged): the official measures with and without comment lines, ``-m
all_trec`` with ``-q``, ``-c``, ``-M``, ``-l`` and ``relstring``, preference judgments (``-R
prefs`` and ``-R qrels_prefs``), judgment groups (``-R qrels_jg``), measure parameters and
z-scores (``-Z``).
"""

from __future__ import annotations

import pytest

from tests.conftest import TREC_REF

MEAS_PARAMS = ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000", "-m",
               "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75", "-mndcg.1=3,2=9,4=4.5",
               "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20"]

# (options, rel_info file, results file, expected stdout), in the order of trec_eval's Makefile
QUICKTEST = [
    ([], "qrels.test", "results.test", "out.test"),
    ([], "qrels.test.with-comments", "results.test", "out.test"),
    (["-m", "all_trec"], "qrels.test", "results.test", "out.test.a"),
    (["-m", "all_trec", "-q"], "qrels.test", "results.test", "out.test.aq"),
    (["-m", "all_trec", "-q", "-c"], "qrels.test", "results.trunc", "out.test.aqc"),
    (["-m", "all_trec", "-q", "-c", "-M100"], "qrels.test", "results.trunc", "out.test.aqcM"),
    (["-m", "all_trec", "-mrelstring.20", "-q", "-l2"], "qrels.rel_level", "results.test", "out.test.aql"),
    (["-m", "all_prefs", "-q", "-R", "prefs"], "prefs.test", "prefs.results.test", "out.test.prefs"),
    (["-m", "all_prefs", "-q", "-R", "prefs"], "prefs.comment.test", "prefs.results.test", "out.test.prefs"),
    (["-m", "all_prefs", "-q", "-R", "qrels_prefs"], "qrels.test", "results.test", "out.test.qrels_prefs"),
    (["-m", "qrels_jg", "-q", "-R", "qrels_jg"], "qrels.123", "results.test", "out.test.qrels_jg"),
    (["-m", "qrels_jg", "-q", "-R", "qrels_jg"], "qrels.comments.123", "results.test", "out.test.qrels_jg"),
    (MEAS_PARAMS, "qrels.test", "results.test", "out.test.meas_params"),
    (["-q", "-m", "all_trec", "-Z", str(TREC_REF / "zscores_file")], "qrels.test", "results.test", "out.test.aqZ"),
]


@pytest.mark.parametrize("options,rel_info,results,expected", QUICKTEST,
                         ids=[f"{c[3]}:{c[1]}" for c in QUICKTEST])
def test_quicktest_line_prints_trec_eval_output_byte_for_byte(cli, options, rel_info, results, expected):
    out = cli("trec", *options, TREC_REF / rel_info, TREC_REF / results)
    assert out.exit_code == 0, out.stderr
    assert out.stdout_bytes == (TREC_REF / expected).read_bytes()
