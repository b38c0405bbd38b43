"""The preference measures (m_prefs_*.c) on a judgment group worked by hand, and -R prefs /
qrels_prefs against trec_eval's own expected outputs."""

from __future__ import annotations

import pytest

from ragmeter.trec.evaluate import evaluate
from ragmeter.trec.output import lines
from ragmeter.trec.prefs_measures import evaluate_prefs
from tests.conftest import TREC_REF

# one group, one sub-group: A (2) > B (1) > C (0); the run ranks B above A and misses C
PREFS = "t u s A 2\nt u s B 1\nt u s C 0\n"
RUN = "t Q0 B 1 2.0 r\nt Q0 A 2 1.0 r\n"


@pytest.fixture
def by_hand(tmp_path):
    (tmp_path / "p").write_text(PREFS)
    (tmp_path / "r").write_text(RUN)
    r = evaluate_prefs(str(tmp_path / "p"), str(tmp_path / "r"), ["all_prefs"])
    return {n: r.values(n)[0] for n in r.metric_names}


def test_counts_by_hand(by_hand):
    # A>B: both retrieved, not fulfilled; A>C and B>C: implied fulfilled (C not retrieved)
    assert (by_hand["prefs_num_prefs_poss"], by_hand["prefs_num_prefs_ful"], by_hand["prefs_num_prefs_ful_ret"]) == \
        (3, 2, 0)


def test_ratios_by_hand(by_hand):
    assert by_hand["prefs_simp"] == 2 / 3 and by_hand["prefs_simp_ret"] == 0 / 1 and by_hand["prefs_simp_imp"] == 2 / 3
    # pairs (B, A): 0 of 1; (B, C) and (A, C): 1 of 1
    assert by_hand["prefs_pair"] == (0 + 1 + 1) / 3 and by_hand["prefs_pair_ret"] == 0.0
    assert by_hand["prefs_avgjg"] == 2 / 3 and by_hand["prefs_avgjg_imp"] == 2 / 3 and by_hand["prefs_avgjg_ret"] == 0


def test_rnonrel_by_hand(by_hand):
    # R = 2 relevant (A, B), N = 1 non-relevant: R - N = 1 fulfilled preference per relevant retrieved added
    assert by_hand["prefs_avgjg_Rnonrel"] == (2 + 2 * 1) / (3 + 2 * 1)
    # retrieved only: R = 2, N = 0: ful 0 + 2 * 2, poss 1 + 2 * 2
    assert by_hand["prefs_avgjg_Rnonrel_ret"] == (0 + 2 * 2) / (1 + 2 * 2)


@pytest.mark.parametrize("rel_info,results,rel_format,expected", [
    ("prefs.test", "prefs.results.test", "prefs", "out.test.prefs"),
    ("prefs.comment.test", "prefs.results.test", "prefs", "out.test.prefs"),
    ("qrels.test", "results.test", "qrels_prefs", "out.test.qrels_prefs")])
def test_trec_evals_expected_output(rel_info, results, rel_format, expected):
    r = evaluate(TREC_REF / rel_info, TREC_REF / results, ["all_prefs"], rel_format=rel_format)
    assert "".join(line + "\n" for line in lines(r, per_query=True)) == (TREC_REF / expected).read_text()


def test_a_topic_the_run_misses(tmp_path):
    (tmp_path / "p").write_text(PREFS + "t2 u s A 1\nt2 u s B 0\n")
    (tmp_path / "r").write_text(RUN)
    from ragmeter.trec.errors import TrecInputError

    with pytest.raises(TrecInputError, match="no results in the run: 't2'") as refused:
        evaluate_prefs(str(tmp_path / "p"), str(tmp_path / "r"), ["prefs_simp"])
    assert refused.value.exit_code == 4
    complete = evaluate_prefs(str(tmp_path / "p"), str(tmp_path / "r"), ["prefs_simp", "num_q"], complete=True)
    assert complete.values("prefs_simp") == [2 / 3, 0.0] and complete.mean("num_q") == 2
