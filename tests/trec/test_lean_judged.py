"""relstring, infAP, utility, binG and yaap (m_relstring.c, m_infap.c, m_utility.c, m_binG.c,
m_yaap.c) on a topic worked by hand, through both engines.

The topic (level 1): qrels a=2, b=0, c=1, d=-1 (pooled, unjudged), e=1 (not retrieved); the
ranking x (not in the pool), a, d, b, c: labels -1, 2, -2, 0, 1; R = 3 (a, c, e).
"""

from __future__ import annotations

import math

import pytest

from ragmeter.trec.evaluate import evaluate
from ragmeter.trec.lean_judged import relstring_char
from tests.trec.conftest import QRELS, RUN

E = 0.00001


def test_relstring_shows_each_label(scored):
    assert scored("relstring")["relstring"] == "-2.01"
    assert scored("relstring.3")["relstring_3"] == "-2."
    assert [relstring_char(x) for x in (12, 9, 0, -1, -2, -5)] == [">", "9", "0", "-", ".", "<"]


def test_infap_by_hand(scored):
    # a at rank 2 (j = 1): r=1, n=0, u=0; c at rank 5 (j = 4): r=2, n=1 (b), u=1 (d); x is skipped
    a = 1 / 2 + (1 / 2) * ((1 - 1 + 0 + 0) / 1) * ((1 - 1 + E) / (1 - 1 + 0 + 2 * E))
    c = 1 / 5 + (4 / 5) * ((2 - 1 + 1 + 1) / 4) * ((2 - 1 + E) / (2 - 1 + 1 + 2 * E))
    assert scored("infAP")["infAP"] == (a + c) / 3


def test_utility_by_hand(scored):
    # a = 2 relevant retrieved, b = 3 non-relevant retrieved, c = 1 relevant missed, d = N + 2 - 5 - 3
    assert scored("utility")["utility"] == 2 - 3
    assert scored("utility.2,-1,0.5,0.1", num_docs=100)["utility_2,-1,0.5,0.1"] == 2 * 2 - 3 + 0.5 + 0.1 * 94


def test_binG_by_hand(scored):
    # a has 1 non-relevant document above it (x), c has 3 (x, d, b)
    assert scored("binG")["binG"] == (1 / math.log2(3) + 1 / math.log2(5)) / 3


def test_yaap_by_hand(scored):
    s = 1 / 2 + 2 / 5  # precision at the relevant ranks 2 and 5
    assert scored("yaap")["yaap"] == math.log((1 + s) / (1 + 3 - s))


def test_utility_needs_four_coefficients(tmp_path):
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    from ragmeter.trec.errors import TrecMeasureError

    with pytest.raises(TrecMeasureError, match="utility takes 4 coefficients") as refused:
        evaluate(tmp_path / "q", tmp_path / "r", ["utility.1,2"])
    assert refused.value.exit_code == 4  # trec_eval: Can't calculate measure
