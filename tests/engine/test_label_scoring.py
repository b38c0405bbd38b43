"""``ragmeter.engine.label_scoring``: Score the label metrics: one ranked batch per view, each kernel
over all samples at once."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.results import NotComputed
from ragmeter.core.sample import Chunk, Sample
from ragmeter.core.score_column import ScoreColumn
from ragmeter.engine.coverage import coverage_message, nothing_retrieved_message
from ragmeter.engine.evaluate import evaluate
from ragmeter.engine.label_scoring import NO_LABELS
from ragmeter.report.result_json import result_text
from tests.columnar_samples import columnar, label_samples, per_sample

ROWS = [{"id": "q1", "retrieved": ["a", "b", "c"], "relevant": ["b"]},
        {"id": "q2", "retrieved": ["d"], "relevant": ["d", "e"]}]


def test_k_past_the_longest_list_allocates_by_the_data():
    from ragmeter.engine import evaluate
    from ragmeter.io import from_samples
    from ragmeter.io.rows import make_samples

    data = from_samples(make_samples(list(enumerate(ROWS, 1)), "mem"))
    names = ["ndcg", "precision", "recall", "mrr", "map", "hit_rate", "r_precision", "context_precision"]
    small = evaluate(data, names, k=3)
    tracemalloc.start()
    big = evaluate(data, names, k=1_000_000_000)  # padding to k was 2 x 1e9 x 8 bytes
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 * 2 ** 20, peak
    for m_small, m_big in zip(small.measures, big.measures):
        values = [o.value for o in big.outcomes[m_big]]
        if m_small.spec.name == "precision":  # / k: one relevant chunk found in 1e9 ranks
            assert values == [1 / 1_000_000_000, 1 / 1_000_000_000]
        else:  # no cut-off past the list: equal to k = the list length
            assert values == [o.value for o in small.outcomes[m_small]], m_small


SECRET = "sk-fastscore-0123456789"  # a held credential (set as an API key below): redacted in run files


MEASURES = ["precision@3", "recall@3", "hit_rate@3", "reciprocal_rank@3", "ndcg@3", "ndcg(gain='exp')",
            "precision", "average_precision", "r_precision", "hit_rate(granular=True)@2"]


def same_result(fast: EvaluationResult, slow: EvaluationResult) -> None:
    assert fast.measures == slow.measures
    for m in fast.measures:
        assert isinstance(fast.outcomes[m], ScoreColumn) and type(slow.outcomes[m]) is tuple
        assert fast.outcomes[m] == slow.outcomes[m] and slow.outcomes[m] == fast.outcomes[m]
        assert fast.summary(m) == slow.summary(m)  # mean, interval, counts, reasons
        assert fast.values(m) == slow.values(m)
        assert coverage_message(m, fast.outcomes[m]) == coverage_message(m, slow.outcomes[m])
    assert fast.means() == slow.means()
    assert repr(fast) == repr(slow)
    doc = fast.to_dict()
    assert doc == slow.to_dict()
    assert fast.to_dict(samples=False) == slow.to_dict(samples=False)
    text = result_text(fast)
    assert text == result_text(slow) == json.dumps(doc, indent=2, ensure_ascii=False)
    assert nothing_retrieved_message(fast) == nothing_retrieved_message(slow)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(samples=label_samples(SECRET), k=st.sampled_from([None, 1, 3, 10]))
def test_columnar_path_gives_the_per_sample_results(samples: list[Sample], k: int | None) -> None:
    names = list(dict.fromkeys(sorted(MEASURES)))
    fast = evaluate(columnar(samples), names, k=k)
    slow = per_sample(samples, names, k)
    assert list(fast.sample_ids) == [s.id for s in samples]
    same_result(fast, slow)


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
def test_the_cases_the_generator_must_reach() -> None:
    """Unlabeled, unranked and undefined samples on both paths, said with their reasons."""
    samples = [Sample("a", retrieved=(Chunk("x"), Chunk("y")), relevance={"y": 2.0}),
               Sample("b", retrieved=(Chunk("x"),)),  # no labels
               Sample("c", relevance={"x": 1.0}),  # nothing retrieved
               Sample("d", retrieved=(Chunk("x"),), relevance={"x": 0.0})]  # R = 0: recall undefined
    fast = evaluate(columnar(samples), ["recall@2", "precision", "ndcg@2"], k=None)
    same_result(fast, per_sample(samples, ["recall@2", "precision", "ndcg@2"], None))
    recall = fast["recall@2"]
    assert [o.status for o in recall] == ["scored", "not_computed", "scored", "not_computed"]
    assert recall[1] == NotComputed(NO_LABELS, recall.provenance)
    assert fast.summary("recall@2").reasons == {NO_LABELS: 1, "no relevant chunk labeled": 1}
    assert fast.values("precision")[2] is None  # an empty ranking, no cut-off: undefined
    # a: grade 2 at rank 2 over the ideal grade 2 at rank 1; c: nothing retrieved, 0; b and d not computed
    assert fast.summary("ndcg@2").mean == pytest.approx(((2 / np.log2(3)) / 2 + 0) / 2)
    assert fast.summary("ndcg@2").scored == 2


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
def test_nothing_retrieved_read_from_the_columns() -> None:
    samples = [Sample("a", relevance={"x": 1.0}), Sample("b", relevance={"y": 1.0})]
    fast = evaluate(columnar(samples), ["mrr@5"], k=5)
    message = nothing_retrieved_message(fast)
    assert message is not None and message == nothing_retrieved_message(per_sample(samples, ["mrr@5"], 5))
