"""One result-access API: a label run and a TREC run of the same data read the same way."""

from __future__ import annotations

import math

import pytest

from ragmeter import Chunk, Sample, evaluate
from ragmeter.core.result_access import ResultAccess
from ragmeter.trec import evaluate_trec
from tests.installed import need

QRELS = {"q1": {"r1": 1, "r2": 2, "r3": 1}, "q2": {"x": 0, "y": 3}}
RUN = {"q1": {"a": 5.0, "r1": 4.0, "b": 3.0, "r2": 2.0, "c": 1.0}, "q2": {"y": 2.0, "x": 1.0}}
RANKED = {"q1": ["a", "r1", "b", "r2", "c"], "q2": ["y", "x"]}


@pytest.fixture(scope="module")
def both():
    samples = [Sample(id=q, retrieved=tuple(Chunk(d) for d in RANKED[q]),
                      relevance={d: float(g) for d, g in lab.items()})
               for q, lab in QRELS.items()]
    return evaluate(samples, ["precision@5", "ndcg@5", "reciprocal_rank"], k=5), \
        evaluate_trec(QRELS, RUN, ["P.5", "ndcg_cut.5", "recip_rank", "num_ret"])


def test_both_results_are_read_through_one_protocol(both):
    label, trec = both
    assert isinstance(label, ResultAccess) and isinstance(trec, ResultAccess)
    assert label.metric_names == ["precision@5", "ndcg@5", "reciprocal_rank@5"]
    assert trec.metric_names == ["num_ret", "recip_rank", "P_5", "ndcg_cut_5"]


def test_means_and_values_agree_across_the_two(both):
    label, trec = both
    q1_ndcg = (1 / math.log2(3) + 2 / math.log2(5)) / (2 + 1 / math.log2(3) + 1 / math.log2(4))
    assert label.values("ndcg@5") == trec.values("ndcg_cut_5") == [q1_ndcg, 1.0]
    assert label.values("precision@5") == trec.values("P_5") == [2 / 5, 1 / 5]
    assert label.means()["reciprocal_rank@5"] == trec.means()["recip_rank"] == (1 / 2 + 1) / 2
    assert trec.means()["num_ret"] == 7.0 and isinstance(trec.means()["num_ret"], float)


def test_dataframes_have_one_row_per_query(both):
    need("pandas")
    label, trec = both
    a, b = label.to_dataframe(), trec.to_dataframe()
    assert list(a.index) == list(b.index) == ["q1", "q2"]
    assert a["ndcg@5"].tolist() == b["ndcg_cut_5"].tolist()
