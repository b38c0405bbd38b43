"""One Cohen's kappa for judge-vs-human and labeler-vs-labeler agreement, with one rule for the
case it is undefined: both raters constant on the same label (chance agreement 1) is None."""

from __future__ import annotations

import pytest

from ragmeter.analysis.judge_agreement import agreement, cohen_kappa
from ragmeter.label import agreement as label_agreement


def test_the_label_module_uses_the_one_kappa():
    assert label_agreement.cohen_kappa is cohen_kappa


@pytest.mark.parametrize("a,b", [([1, 1, 1], [1, 1, 1]), (["x"] * 4, ["x"] * 4)])
def test_constant_agreeing_raters_have_no_kappa(a, b):
    assert cohen_kappa(a, b) is None
    assert agreement(dict(zip("abcd", map(float, [1] * len(a)))), dict(zip("abcd", [1.0] * len(b))),
                     "m").kappa is None  # judge vs human: it was 1.0 here and None between labelers


def test_constant_raters_that_disagree_have_kappa_zero():
    assert cohen_kappa([1, 1, 1], [0, 0, 0]) == 0.0  # p_o = 0, p_e = 0
