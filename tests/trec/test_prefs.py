"""Preference judgments (form_prefs_counts.c): docid ranks, equivalence classes, preference
matrices closed under transitivity, and trec_eval's refusals; worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.trec.errors import TrecInputError
from ragmeter.trec.prefs import Pref, docid_ranks, form_prefs_counts, ranking_for_prefs, read_prefs


def prefs(*rows: tuple[str, str, str, float]) -> list[Pref]:
    return sorted((Pref(jg.encode(), jsg.encode(), d, level) for jg, jsg, d, level in rows), key=lambda p: p.docno)


def test_ties_break_by_docno_ascending_here():
    """form_prefs_counts.c sorts equal scores by docno ascending (form_res_rels.c: descending)."""
    assert ranking_for_prefs([("b", 1.0), ("a", 1.0), ("c", 2.0)], None) == ["c", "a", "b"]
    assert ranking_for_prefs([("b", 1.0), ("a", 1.0), ("c", 2.0)], 2) == ["c", "a"]


def test_docid_ranks_number_retrieved_then_unretrieved_by_docno():
    lines = prefs(("u", "s", "z", 1), ("u", "s", "a", 2), ("u", "s", "m", 0))
    ranks, nj, njr = docid_ranks(lines, ["m", "x", "z"])
    assert dict(zip([p.docno for p in lines], ranks)) == {"m": 0, "z": 1, "a": 2} and (nj, njr) == (3, 2)


def test_one_sub_group_counts_by_equivalence_class():
    # A (2) > B (1) > C (0); ranking B, A: docids B=0, A=1, C=2 (not retrieved)
    t = form_prefs_counts(prefs(("u", "s", "A", 2), ("u", "s", "B", 1), ("u", "s", "C", 0)), ["B", "A"], "t", "f")
    g = t.groups[0]
    assert (g.fulfilled_ret, g.possible_ret, g.fulfilled_imp, g.possible_imp, g.possible_notoccur) == (0, 1, 2, 2, 0)
    assert (g.num_rel, g.num_rel_ret, g.num_nonrel, g.num_nonrel_ret) == (2, 2, 1, 0)
    assert t.counts.tolist() == [[0, 0, 1], [1, 0, 1], [0, 0, 0]]  # A over B, A over C, B over C


def test_sub_groups_are_closed_under_transitivity():
    # s1: A > B; s2: B > C  =>  A > C too (a matrix: two sub-groups)
    lines = prefs(("u", "s1", "A", 2), ("u", "s1", "B", 1), ("u", "s2", "B", 5), ("u", "s2", "C", 4))
    t = form_prefs_counts(lines, ["C", "B", "A"], "t", "f")  # C=0, B=1, A=2: every preference unfulfilled
    assert t.groups[0].prefers is not None
    assert t.counts.tolist() == [[0, 0, 0], [1, 0, 0], [1, 1, 0]]
    assert (t.groups[0].possible_ret, t.groups[0].fulfilled_ret) == (3, 0)


def test_conflicts_are_refused_as_trec_eval_refuses_them():
    with pytest.raises(TrecInputError, match="two different levels in one judgment sub-group") as refused:
        form_prefs_counts(prefs(("u", "s", "A", 2), ("u", "s", "A", 1)), ["A"], "t", "f")
    assert refused.value.exit_code == 4
    cycle = prefs(("u", "s1", "A", 2), ("u", "s1", "B", 1), ("u", "s2", "B", 2), ("u", "s2", "A", 1))
    with pytest.raises(TrecInputError, match="each preferred to the other"):  # trec_eval aborts
        form_prefs_counts(cycle, ["A", "B"], "t", "f")
    zero = prefs(("u", "s1", "A", 0), ("u", "s1", "B", 1), ("u", "s2", "A", 3), ("u", "s2", "B", 2))
    with pytest.raises(TrecInputError, match="both level 0 and a level above 0"):
        form_prefs_counts(zero, ["A", "B"], "t", "f")


def test_read_prefs_and_qrels_prefs(tmp_path):
    (tmp_path / "p").write_text("# judge 1\nt1 u s d2 1.5\nt1 u s d1 0\nt0 u s d1 2\n")
    got = read_prefs(str(tmp_path / "p"))
    assert list(got) == ["t0", "t1"] and [p.docno for p in got["t1"]] == ["d1", "d2"]
    assert got["t1"][1] == Pref(b"u", b"s", "d2", 1.5)
    (tmp_path / "q").write_text("t1 0 d1 1\n")
    assert read_prefs(str(tmp_path / "q"), qrels_layout=True)["t1"] == [Pref(b"0", b"0", "d1", 1.0)]
    (tmp_path / "bad").write_text("t1 u s d1 high\n")
    with pytest.raises(TrecInputError, match="line 1.*rel_level 'high' is not a number"):
        read_prefs(str(tmp_path / "bad"))
    (tmp_path / "short").write_text("t1 u d1 1\n")
    with pytest.raises(TrecInputError, match="expected 5 fields"):
        read_prefs(str(tmp_path / "short"))


def test_counts_wrap_as_unsigned_short():
    assert np.zeros(1, np.uint16).dtype.itemsize == 2  # trec_eval's COUNTS_ARRAY is unsigned short
