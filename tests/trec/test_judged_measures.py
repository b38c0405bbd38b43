"""The vectorised relstring, infAP, utility, binG, yaap and rbp_resid equal the plain-Python ports
(hand-worked values in tests/trec/test_lean_judged.py), on rankings with every kind of label."""

from __future__ import annotations

import pytest

from ragmeter.trec.evaluate import evaluate


@pytest.mark.parametrize("level", [1, 2, 0, -1])
def test_the_vectorised_measures_equal_the_ports(tmp_path, level):
    (tmp_path / "q").write_text("t 0 a 12\nt 0 b 1\nt 0 c 0\nt 0 d -1\nt 0 e 2\nu 0 f 1\nv 0 g 0\n")
    (tmp_path / "r").write_text("t Q0 x 1 9 r\nt Q0 a 2 8 r\nt Q0 d 3 7 r\nt Q0 b 4 6 r\nt Q0 c 5 6 r\n"
                                "t Q0 y 6 1 r\nt Q0 e 7 0 r\nu Q0 z 1 1 r\nv Q0 g 1 1 r\n")
    measures = ["relstring.7", "infAP", "utility.1,-1,0.5,0.1", "binG", "yaap", "rbp_resid", "rbp_resid.p=0.5"]
    python, arrow = (evaluate(tmp_path / "q", tmp_path / "r", measures, engine=e, level=level, num_docs=20)
                     for e in ("python", "arrow"))
    assert python.names == arrow.names
    for name in python.names:
        if name in python.per_topic:
            assert repr(list(python.per_topic[name])) == repr(list(arrow.per_topic[name].tolist())), name
    assert python.values("relstring_7") == ["->.01-2", "-", "0"]  # b and c tie: c (docno descending) first
