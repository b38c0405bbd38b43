"""Judgment groups (-R qrels_jg): each group scores the ranking with its own judgments, and the
topic's value is their mean (m_map_avgjg.c, m_P_avgjg.c, m_Rprec_mult_avgjg.c)."""

from __future__ import annotations

import pytest

from ragmeter.trec.errors import TrecInputError
from ragmeter.trec.judgment_groups import averaged, evaluate_groups, read_groups

QRELS = "t 1 a 1\nt 1 b 0\nt 2 a 0\nt 2 b 1\nt 2 c 1\n"
RUN = "t Q0 a 1 3 r\nt Q0 b 2 2 r\nt Q0 c 3 1 r\n"


def test_each_group_scores_with_its_own_judgments(tmp_path):
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    r = evaluate_groups(str(tmp_path / "q"), str(tmp_path / "r"), ["qrels_jg", "P_avgjg.1,2"])
    # group 1: a relevant at rank 1 (AP 1); group 2: b, c at ranks 2, 3 (AP (1/2 + 2/3) / 2)
    assert r.values("map_avgjg") == [(1.0 + (1 / 2 + 2 / 3) / 2) / 2]
    assert r.values("P_avgjg_1") == [(1.0 + 0.0) / 2] and r.values("P_avgjg_2") == [(0.5 + 0.5) / 2]


def test_one_group_is_not_divided():
    assert averaged([[0.3, 0.7]]) == [0.3, 0.7]
    assert averaged([[0.5], [0.25]]) == [(0.5 + 0.25) / 2]


def test_a_document_judged_twice_in_a_group_cannot_be_read(tmp_path):
    (tmp_path / "q").write_text(QRELS + "t 1 a 0\n")
    with pytest.raises(TrecInputError, match="judged twice for topic 't' in judgment group '1'") as refused:
        read_groups(str(tmp_path / "q"))
    assert refused.value.exit_code == 2  # trec_eval: Quit in file
    (tmp_path / "ok").write_text(QRELS)
    assert list(read_groups(str(tmp_path / "ok"))["t"]) == [b"1", b"2"]
