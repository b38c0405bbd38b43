"""The vectorised gain measures: the C library's log2 for every argument G meets, and the same
numbers as the plain-Python ports on gains that make the ideal ranking odd."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter.trec.evaluate import evaluate
from ragmeter.trec.gain_measures import c_log2, integer_gains, powers


def test_c_log2_is_math_log2():
    x = np.array([1.0, 2.0, 3.0, 1000.0, 2.5, 0.75, 0.0, -1.0, 3e7])
    got = c_log2(x)
    want = [math.log2(v) if v > 0 else (-math.inf if v == 0 else math.nan) for v in x.tolist()]
    assert got[:7].tolist() == want[:7] and math.isnan(got[7]) and got[8] == want[8]


def test_powers_multiply_one_step_at_a_time():
    p = 0.9
    assert powers(p, 3).tolist() == [1.0, p, p * p, p * p * p]


def test_integer_gains():
    assert integer_gains((("1", 2.0), ("p", 0.5), ("-1", 3.0), ("1.5", 1.0))) == ((1, 2.0), (-1, 3.0))


@pytest.mark.parametrize("measure", ["ndcg.2=0.5,1=0.7", "G.0=2", "Rndcg.1=5,2=5", "ndcg_rel.-1=1", "rbp.1=-2,p=0.7",
                                     "dcg.1=3,1=4", "ideal_dcg.0=1"])
def test_odd_gains_agree_with_the_plain_python_port(tmp_path, measure):
    (tmp_path / "q").write_text("t 0 a 2\nt 0 b 1\nt 0 c 0\nt 0 d 1\nu 0 e -1\nv 0 f 3\n")
    (tmp_path / "r").write_text("t Q0 x 1 5 r\nt Q0 b 2 4 r\nt Q0 a 3 4 r\nt Q0 c 4 1 r\nu Q0 e 1 1 r\n"
                                "v Q0 f 1 1 r\nv Q0 g 2 0 r\n")
    python, arrow = (evaluate(tmp_path / "q", tmp_path / "r", [measure], engine=e) for e in ("python", "arrow"))
    name = python.metric_names[0]
    assert repr(python.values(name)) == repr(list(arrow.per_topic[name].tolist()))
