"""Hand-worked values, written as the formula so a reviewer checks the derivation."""

from __future__ import annotations

import math

import pytest

from ragmeter import Chunk, Sample, evaluate


def sample(ranked, labels, sid="q", context=None):
    rel = labels if isinstance(labels, dict) else {c: 1.0 for c in labels}
    return Sample(id=sid, retrieved=tuple(Chunk(c) for c in ranked), relevance=rel,
                  context=tuple(context) if context is not None else None)


def value(s, metric, k=5, **kw):
    result = evaluate([s], [metric], k=k, **kw)
    return result.values(result.metric_names[0])[0]


SEED_Q1 = sample(["w1", "w2", "r30", "claim", "doa"], ["w2", "claim", "excl"])


@pytest.mark.parametrize("metric,expected", [
    ("precision@5", 2 / 5),
    ("recall@5", 2 / 3),
    ("hit_rate@5", 1.0),
    ("hit_rate(granular=True)@5", 2 / 3),
    ("reciprocal_rank@5", 1 / 2),
    ("reciprocal_rank(granular=True)@5", (1 / 2 + 1 / 4) / 2),
    ("average_precision@5", (1 / 2 + 2 / 4) / 3),
    ("rank_weighted_precision@5", (1 / 2 + 2 / 4) / 2),
    ("r_precision", 1 / 3),  # top R = 3 holds one relevant chunk
    ("ndcg@5", (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))),
    ("ndcg(discount='jk2002')@5", (1 + 1 / math.log2(4)) / (1 + 1 + 1 / math.log2(3))),
    ("ndcg(discount='jk2002', base=3.0)@5", (1 + 1 / math.log(4, 3)) / (1 + 1 + 1)),
    ("precision@3", 1 / 3),
    ("recall@3", 1 / 3),
    ("average_precision@3", (1 / 2) / 3),
    ("precision@10", 2 / 10),  # a short list counts as padded with non-relevant chunks
])
def test_seed_q1(metric, expected):
    assert value(SEED_Q1, metric) == pytest.approx(expected, abs=1e-12)


GRADED = sample(["a", "b", "c", "d"], {"a": 1, "b": 2, "c": 3, "d": 0, "e": 2})


@pytest.mark.parametrize("metric,expected", [
    ("ndcg@3", (1 + 2 / math.log2(3) + 3 / math.log2(4)) / (3 + 2 / math.log2(3) + 2 / math.log2(4))),
    ("ndcg(gain='exp')@3", (1 + 3 / math.log2(3) + 7 / math.log2(4)) / (7 + 3 / math.log2(3) + 3 / math.log2(4))),
    ("ndcg", (1 + 2 / math.log2(3) + 3 / math.log2(4))
             / (3 + 2 / math.log2(3) + 2 / math.log2(4) + 1 / math.log2(5))),
    ("precision(rel=2.0)@4", 2 / 4),
    ("recall(rel=2.0)@4", 2 / 3),
    ("reciprocal_rank(rel=2.0)@4", 1 / 2),
    ("average_precision(rel=2.0)@4", (1 / 2 + 2 / 3) / 3),
    ("recall@4", 3 / 4),
])
def test_graded_relevance(metric, expected):
    assert value(GRADED, metric) == pytest.approx(expected, abs=1e-12)


def test_context_view_is_scored_whole():
    s = sample(["a", "b", "c", "d", "e"], ["b", "d"], context=["d", "b"])
    assert value(s, "precision", view="context") == pytest.approx(2 / 2)
    assert value(s, "reciprocal_rank", view="context") == 1.0
    assert value(s, "precision", view="retrieved") == pytest.approx(2 / 5)


def test_not_computed_when_nothing_relevant_is_labeled():
    s = sample(["a", "b"], {"a": 0, "b": 0})
    result = evaluate([s], ["precision", "recall", "ndcg", "average_precision", "hit_rate", "reciprocal_rank"], k=5)
    outcomes = {name: result[name][0] for name in result.metric_names}
    assert outcomes["precision@5"].value == 0.0  # judged non-relevant chunks: a real 0
    for name in ("recall@5", "ndcg@5", "average_precision@5", "hit_rate@5", "reciprocal_rank@5"):
        assert outcomes[name].status == "not_computed"
        assert "no relevant chunk labeled" in outcomes[name].reason


def test_unlabeled_sample_is_not_computed_and_kept_out_of_the_mean():
    labeled = sample(["a", "b"], ["a"], sid="x")
    unlabeled = sample(["a", "b"], {}, sid="y")
    result = evaluate([labeled, unlabeled], ["precision@2"])
    summary = result.summary("precision@2")
    assert (summary.mean, summary.scored, summary.not_computed) == (0.5, 1, 1)
    assert result["precision@2"][1].reason == "no relevance labels for this sample"


def test_empty_retrieved_list_scores_zero_not_nan():
    s = sample([], ["a"])
    result = evaluate([s], ["recall@5", "ndcg@5", "reciprocal_rank@5", "precision@5"])
    assert result.values("recall@5") == [0.0]
    assert result.values("ndcg@5") == [0.0]
    assert result.values("precision@5") == [0.0]
    assert evaluate([s], ["precision"], k=None)["precision"][0].status == "not_computed"
