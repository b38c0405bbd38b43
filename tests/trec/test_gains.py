"""trec_eval's gain table (gain_init.c): glibc's merge sort under the int-truncating comparator,
get_gain's first match, and the ideal ranking's walk."""

from __future__ import annotations

from ragmeter.trec.gains import INT_MIN, c_int, gain_table, merge_sort


def test_c_int_truncates_and_saturates_as_cvttsd2si():
    assert [c_int(x) for x in (0.9, -0.9, 2.5, -2.5, 3e9, -3e9, float("nan"))] == [0, 0, 2, -2, INT_MIN, INT_MIN,
                                                                                     INT_MIN]


def test_merge_sort_is_glibcs_on_an_inconsistent_comparator():
    """Gains 0.5 apart compare equal: the order depends on the algorithm, as in C."""
    def cmp(a, b):
        return c_int(a - b)
    assert merge_sort([3, 1, 2], cmp) == [1, 2, 3]
    assert merge_sort([0.5, 0.0, 1.2], cmp) == [0.5, 0.0, 1.2]  # 0.5 ~ 0.0 and 0.0 < 1.2: nothing moves
    # [1.2] | [0.0, 0.5]: 1.2 > 0.0 (0.0 first), then 1.2 ~ 0.5 (int 0.7 = 0): the left one first
    assert merge_sort([1.2, 0.0, 0.5], cmp) == [0.0, 1.2, 0.5]


def test_default_gains_are_the_grades():
    table = gain_table((), 4)
    assert table.default and [e.level for e in table.entries] == [0, 1, 2, 3]
    assert table.ideal({0: 5, 2: 2, 3: 1}) == [3.0, 2.0, 2.0]
    assert table.gain(-1) == 0.0 and table.gain(2) == 2.0


def test_a_gain_under_one_from_grade_0_stays_below_it():
    """ndcg.1=0.5: 0.5 - 0 truncates to 0, so grade 1 (0.5) keeps its place before grade 0 (0) in
    the stable sort; the ideal walk from the top meets grade 0 (gain 0) first and stops there."""
    table = gain_table(((1, 0.5),), 3)
    assert [(e.level, e.gain) for e in table.entries] == [(1, 0.5), (0, 0.0), (2, 2.0)]
    assert table.ideal({0: 1, 1: 4, 2: 1}) == [2.0]


def test_repeated_pairs_first_counted_sorted_first_wins():
    table = gain_table(((1, 5.0), (1, 3.0)), 2)
    assert table.counts({0: 2, 1: 3}) == [2, 0, 3]  # entries 0, (1: 3, uncounted), (1: 5, counted)
    assert table.gain(1) == 3.0  # get_gain takes the first in sorted order
    assert gain_table(((-1, 2.0),), 1).gain(-1) == 2.0  # unjudged documents can get a gain
