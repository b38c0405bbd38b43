"""Differential test against pytrec_eval (pytrec-eval-terrier, which embeds trec_eval 9).

Generated qrels and runs with score ties, graded and negative labels, short lists, run
topics without qrels and qrels topics without results; every measure pytrec_eval computes
where trec_eval 9 and 10 agree (not iprec_at_recall / 11pt_avg, whose rounding changed in
10.0), per topic, to 1e-9.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.trec import evaluate_trec
from tests.installed import need

pytrec_eval = need("pytrec_eval")

MEASURES = {"map", "P", "recall", "ndcg", "ndcg_cut", "Rprec", "bpref", "recip_rank", "success", "map_cut",
            "num_ret", "num_rel", "num_rel_ret", "set_P", "set_recall", "set_F", "set_map", "set_relative_P",
            "relative_P", "Rprec_mult", "num_nonrel_judged_ret"}
OURS = ["map", "P", "recall", "ndcg", "ndcg_cut", "Rprec", "bpref", "recip_rank", "success", "map_cut",
        "num_ret", "num_rel", "num_rel_ret", "set_P", "relative_P", "Rprec_mult", "num_nonrel_judged_ret"]


def generate(seed: int):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    n_topics = int(rng.integers(1, 12))
    for t in range(n_topics):
        qid = f"t{t:02d}" if rng.random() < 0.5 else str(t)
        pool = [f"d{i}" for i in range(int(rng.integers(5, 40)))]
        judged = rng.choice(pool, size=int(rng.integers(1, len(pool))), replace=False)
        if rng.random() < 0.9:  # some run-only topics
            labels = {str(d): int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in judged}
            if max(labels.values()) < 0:
                # trec_eval 9 (inside pytrec_eval) crashes on a topic whose every label is
                # negative (its rel_levels array gets a negative size); ragmeter does not.
                labels[str(judged[0])] = 0
            qrels[qid] = labels
        if rng.random() < 0.85:  # some qrels-only topics
            size = int(rng.integers(1, len(pool) + 1))  # short and long lists
            docs = rng.choice(pool, size=size, replace=False)
            scores = np.round(rng.random(size) * 4, int(rng.integers(0, 3)))  # heavy ties
            run[qid] = {str(d): float(s) for d, s in zip(docs, scores)}
    return qrels, run


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("seed", range(40))
def test_per_topic_equal_to_pytrec_eval(seed, level):
    qrels, run = generate(seed)
    if not qrels or not run or not set(qrels) & set(run):
        pytest.skip("generated case has no topic in common")
    theirs = pytrec_eval.RelevanceEvaluator(qrels, MEASURES, relevance_level=level).evaluate(run)
    ours = evaluate_trec(qrels, run, OURS, level=level, skip_missing=True)  # trec_eval 9 skips them
    assert set(ours.topics) == set(theirs)
    compared = 0
    for name in ours.names:
        for topic, value in ours.query(name).items():
            expected = theirs[topic][name]
            assert value == pytest.approx(expected, abs=1e-9), (name, topic)
            compared += 1
    assert compared >= len(ours.topics) * 50
