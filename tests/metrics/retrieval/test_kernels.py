"""Differential test: the label metrics, ``ragmeter trec`` and pytrec_eval (trec_eval's C code)
agree topic by topic on generated qrels and runs: graded labels (and negative ones between
ragmeter's two paths), tied scores
(trec_eval ranks ties by docno descending), unjudged documents, relevant documents never
retrieved, short and long lists, topics with nothing relevant.

The label metrics and the trec measures compute through the same kernels
(:mod:`ragmeter.metrics.retrieval.kernels`), so where both are defined they must give the same
bits; pytrec_eval must give the same bits too (it adds and divides in trec_eval's order, as the
kernels do). A label metric is undefined (NotComputed) exactly where trec_eval prints 0 for want
of a relevant document.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter import Chunk, Sample, evaluate
from ragmeter.trec import evaluate_trec
from tests.installed import need

pytestmark = pytest.mark.slow  # every test here took over 2 s (durations of 2026-12-01, load 4 to 8)

pytrec_eval = need("pytrec_eval")

DOCS = [f"d{i:02d}" for i in range(30)]
# label measure (its @k from the test), trec_eval measure (cut at k where it ends in ".")
AT_K = [("precision", "P."), ("recall", "recall."), ("hit_rate", "success."), ("average_precision", "map_cut."),
        ("ndcg", "ndcg_cut.")]
WHOLE = [("reciprocal_rank", "recip_rank"), ("average_precision", "map"), ("ndcg", "ndcg"),
         ("r_precision", "Rprec")]


NONNEGATIVE = [0, 1, 1, 2, 3]
WITH_NEGATIVE = [-1, 0, 1, 2, 3]  # pytrec_eval (trec_eval 9) indexes arrays by grade: a negative one
# corrupts its memory and hangs a later call, so only ragmeter's two paths see these


@st.composite
def topics(draw, grades=NONNEGATIVE):
    n = draw(st.integers(1, 6))
    qrels, run = {}, {}
    for t in range(n):
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True))
        qrels[f"t{t}"] = {d: draw(st.sampled_from(grades)) for d in judged}
        if max(qrels[f"t{t}"].values()) < 0:  # trec_eval 10 refuses a topic judged only negative
            qrels[f"t{t}"][judged[0]] = 0
        retrieved = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=25, unique=True))
        # quarters: pytrec_eval keeps a score in single precision (trec_eval 10 in double), so
        # scores whose order float32 would change are not ones the two can be compared on
        scores = (st.sampled_from([0.5, 1.0, 1.5, 2.0]) if draw(st.booleans())
                  else st.integers(-40, 40).map(lambda x: x / 4))
        run[f"t{t}"] = {d: draw(scores) for d in retrieved}  # a few score values: many ties
    return qrels, run


def trec_ranking(scores: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, ties by docno descending."""
    return [d for d, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def names_for(k: int) -> tuple[list[str], list[str]]:
    """The label measures and the trec_eval measures they equal, at cut-off k and whole."""
    return ([f"{name}@{k}" for name, _ in AT_K] + [name for name, _ in WHOLE],
            [t + str(k) if t.endswith(".") else t for _, t in AT_K] + [t for _, t in WHOLE])


def all_label_values(qrels, run, k: int) -> dict[str, dict[str, float | None]]:
    return {**label_values(qrels, run, [f"{name}@{k}" for name, _ in AT_K], k),
            **label_values(qrels, run, [name for name, _ in WHOLE], None)}


def label_values(qrels, run, names: list[str], k: int | None) -> dict[str, dict[str, float | None]]:
    samples = [Sample(id=t, retrieved=tuple(Chunk(d) for d in trec_ranking(run[t])),
                      relevance={d: float(g) for d, g in qrels[t].items()}) for t in qrels]
    result = evaluate(samples, names, k=k)
    return {name: dict(zip(qrels, result.values(measure))) for name, measure in zip(names, result.measures)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topics(), st.integers(1, 15))
def test_label_metrics_trec_measures_and_pytrec_eval_agree(data, k):
    qrels, run = data
    label_names, trec_names = names_for(k)
    printed = [n.replace(".", "_") for n in trec_names]
    reference = pytrec_eval.RelevanceEvaluator(qrels, set(trec_names)).evaluate(run)
    ours = evaluate_trec(qrels, run, trec_names)
    labels = all_label_values(qrels, run, k)
    assert sorted(ours.topics) == sorted(reference)
    for label, trec in zip(label_names, printed):
        trec_values = ours.query(trec)
        for topic in qrels:
            expected = reference[topic][trec]
            assert trec_values[topic] == expected, (trec, topic, trec_values[topic], expected)
            value = labels[label][topic]
            if value is None:  # undefined: nothing relevant is labelled, and trec_eval prints 0
                assert expected == 0.0 and not any(g >= 1 for g in qrels[topic].values()), (label, topic)
            else:
                assert value == expected, (label, topic, value, expected)


@settings(max_examples=60, deadline=None)
@given(topics(), st.integers(1, 12), st.sampled_from([1, 2, 3]))
def test_relevance_level_moves_label_and_trec_alike(data, k, level):
    """-l level in trec_eval is ``rel=level`` on the label metrics (nDCG ignores both)."""
    qrels, run = data
    names = [f"P.{k}", f"recall.{k}", "map", "recip_rank", "Rprec"]
    reference = pytrec_eval.RelevanceEvaluator(qrels, set(names), relevance_level=level).evaluate(run)
    ours = evaluate_trec(qrels, run, names, level=level)
    labels = label_values(qrels, run, [f"precision(rel={level})@{k}", f"recall(rel={level})@{k}"], k)
    whole = label_values(qrels, run, [f"average_precision(rel={level})", f"reciprocal_rank(rel={level})",
                                      f"r_precision(rel={level})"], None)
    pairs = list(zip(labels, [f"P_{k}", f"recall_{k}"])) + list(zip(whole, ["map", "recip_rank", "Rprec"]))
    values = {**labels, **whole}
    for label, trec in pairs:
        for topic in qrels:
            expected = reference[topic][trec]
            assert ours.query(trec)[topic] == expected, (trec, topic)
            assert values[label][topic] in (None, expected), (label, topic, values[label][topic], expected)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topics(WITH_NEGATIVE), st.integers(1, 15))
def test_negative_grades_label_metrics_equal_trec_measures(data, k):
    """A negative grade is judged non-relevant on both paths, with no gain in nDCG."""
    qrels, run = data
    label_names, trec_names = names_for(k)
    ours = evaluate_trec(qrels, run, trec_names)
    labels = all_label_values(qrels, run, k)
    for label, trec in zip(label_names, trec_names):
        trec_values = ours.query(trec.replace(".", "_"))
        for topic in qrels:
            assert labels[label][topic] in (None, trec_values[topic]), (label, topic)
            if labels[label][topic] is None:
                assert trec_values[topic] == 0.0
