"""The hand-worked topic of tests/trec/test_lean_judged.py and test_lean_gains.py, scored by both
engines: qrels a=2, b=0, c=1, d=-1 (pooled, unjudged), e=1 (not retrieved); the ranking x (not
in the pool), a, d, b, c."""

from __future__ import annotations

import pytest

from ragmeter.trec.evaluate import evaluate

QRELS = "q 0 a 2\nq 0 b 0\nq 0 c 1\nq 0 d -1\nq 0 e 1\n"
RUN = "q Q0 x 1 5 r\nq Q0 a 2 4 r\nq Q0 d 3 3 r\nq Q0 b 4 2 r\nq Q0 c 5 1 r\n"


@pytest.fixture(params=["python", "arrow"])
def scored(request, tmp_path):
    """score(*measures, **options) -> {printed name: the topic's value}, by each engine."""
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)

    def score(*measures: str, **options) -> dict:
        r = evaluate(tmp_path / "q", tmp_path / "r", list(measures), engine=request.param, **options)
        return {n: r.values(n)[0] for n in r.metric_names + [n for n in r.names if r.kinds[n] == "relstring"]}

    return score
