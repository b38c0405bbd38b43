"""Invariants every label metric must keep, over generated rankings (hypothesis)."""

from __future__ import annotations

import doctest
import importlib
import math
import pkgutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragmeter
from ragmeter import Chunk, InvalidParameterError, Sample, evaluate, make_measure, parse_measure
from ragmeter.metrics import REGISTRY

RETRIEVAL = sorted(n for n, s in REGISTRY.items() if s.family == "retrieval")
RANK_AWARE = sorted(n for n in RETRIEVAL if REGISTRY[n].rank_aware)
VARIANTS = RETRIEVAL + ["hit_rate(granular=True)", "reciprocal_rank(granular=True)", "ndcg(gain='exp')",
                        "ndcg(discount='jk2002')"]
POOL = [f"c{i}" for i in range(12)]


@st.composite
def samples(draw, min_relevant=0):
    ranked = draw(st.lists(st.sampled_from(POOL), unique=True, max_size=10))
    labeled = draw(st.lists(st.sampled_from(POOL), unique=True, min_size=1, max_size=8))
    grades = draw(st.lists(st.sampled_from([0, 1, 2, 3]), min_size=len(labeled), max_size=len(labeled)))
    if min_relevant and max(grades) < 1:
        grades[0] = 1
    return dict(zip(labeled, map(float, grades))), ranked


def make(i, labels, ranked):
    return Sample(id=f"q{i}", retrieved=tuple(Chunk(c) for c in ranked), relevance=labels)


@settings(max_examples=60, deadline=None)
@given(st.lists(samples(), min_size=1, max_size=8), st.integers(1, 12))
def test_values_in_unit_range(data, k):
    result = evaluate([make(i, *d) for i, d in enumerate(data)], VARIANTS, k=k)
    for name in result.metric_names:
        for v in result.values(name):
            assert v is None or 0.0 <= v <= 1.0 + 1e-12, (name, v)


@settings(max_examples=40, deadline=None)
@given(st.lists(samples(), min_size=2, max_size=8), st.randoms(use_true_random=False), st.integers(1, 12))
def test_query_order_does_not_change_means(data, rnd, k):
    items = [make(i, *d) for i, d in enumerate(data)]
    shuffled = list(items)
    rnd.shuffle(shuffled)
    assert evaluate(items, VARIANTS, k=k).means() == evaluate(shuffled, VARIANTS, k=k).means()


@settings(max_examples=60, deadline=None)
@given(samples(min_relevant=1))
def test_ideal_ranking_scores_one_on_rank_aware_metrics(d):
    labels, _ = d
    ideal = sorted(labels, key=lambda c: -labels[c])  # every labeled chunk, best grade first
    result = evaluate([make(0, labels, ideal)], RANK_AWARE, k=None)
    for name in result.metric_names:
        assert math.isclose(result.values(name)[0], 1.0), name


@settings(max_examples=80, deadline=None)
@given(samples(min_relevant=1), st.integers(1, 12), st.data())
def test_moving_a_relevant_chunk_up_never_lowers_a_rank_aware_score(d, k, data):
    labels, ranked = d
    relevant_positions = [i for i, c in enumerate(ranked) if labels.get(c, 0) >= 1 and i > 0]
    if not relevant_positions:
        return
    i = data.draw(st.sampled_from(relevant_positions))
    j = data.draw(st.integers(0, i - 1))
    if labels.get(ranked[j], 0) >= labels[ranked[i]]:
        return  # swapping with an equal or better chunk is not "moving up" a relevant chunk
    moved = list(ranked)
    moved[i], moved[j] = moved[j], moved[i]
    # rank_weighted_precision divides by the relevant chunks *found*, so pulling a relevant
    # chunk from outside the top k to its last ranks can lower it (1/1 -> (1 + 2/3)/2): it
    # is monotone only for moves inside the top k. That is the metric's documented nature.
    metrics = RANK_AWARE if i < k else [m for m in RANK_AWARE if m != "rank_weighted_precision"]
    before = evaluate([make(0, labels, ranked)], metrics, k=k)
    after = evaluate([make(0, labels, moved)], metrics, k=k)
    for name in before.metric_names:
        assert after.values(name)[0] >= before.values(name)[0] - 1e-12, name


def test_rank_weighted_precision_drops_when_a_missing_chunk_is_found_late():
    """The counterexample hypothesis found, kept as a known-answer test."""
    labels = {"a": 1.0, "b": 1.0}
    before = evaluate([make(0, labels, ["a", "x", "y", "b"])], ["rank_weighted_precision"], k=3)
    after = evaluate([make(0, labels, ["a", "x", "b", "y"])], ["rank_weighted_precision"], k=3)
    assert before.values("rank_weighted_precision@3") == [1.0]
    assert after.values("rank_weighted_precision@3") == [(1 + 2 / 3) / 2]


# Precision is left out on purpose: P@k divides by k (a short list is padded with
# non-relevant chunks, as trec_eval P.k does), while no cut-off divides by the list length.
NO_PADDING = [m for m in VARIANTS if not m.startswith("precision")]


@settings(max_examples=60, deadline=None)
@given(samples(), st.integers(0, 5))
def test_k_at_or_past_list_length_equals_no_cutoff(d, extra):
    labels, ranked = d
    s = make(0, labels, ranked)
    # nDCG's ideal ranking covers every labeled chunk, so "the whole list" for it means
    # k also at or past the number of labels (as trec_eval ndcg equals ndcg_cut_1000).
    k = max(len(ranked), len(labels), 1) + extra
    cut = evaluate([s], NO_PADDING, k=k)
    whole = evaluate([s], NO_PADDING, k=None)
    for a, b in zip(cut.metric_names, whole.metric_names):
        assert cut.values(a) == whole.values(b) or math.isclose(cut.values(a)[0], whole.values(b)[0]), a


@settings(max_examples=60, deadline=None)
@given(samples(min_relevant=1), st.randoms(use_true_random=False), st.integers(1, 12))
def test_reranking_within_top_k_leaves_precision_and_recall_unchanged(d, rnd, k):
    labels, ranked = d
    head, tail = list(ranked[:k]), list(ranked[k:])
    rnd.shuffle(head)
    a = evaluate([make(0, labels, ranked)], ["precision", "recall"], k=k).means()
    b = evaluate([make(0, labels, head + tail)], ["precision", "recall"], k=k).means()
    assert a == b


NAMES = sorted(REGISTRY)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_rejects_bad_k(name, k):
    with pytest.raises(InvalidParameterError, match="k must be"):
        make_measure(name, k)


@pytest.mark.parametrize("name", NAMES)
def test_rejects_unknown_parameter(name):
    with pytest.raises(InvalidParameterError, match="unknown parameter 'bogus'"):
        parse_measure(f"{name}(bogus=1)@5")


@pytest.mark.parametrize("name", NAMES)
def test_rejects_k_below_one_in_a_string(name):
    with pytest.raises(InvalidParameterError, match="k must be >= 1"):
        parse_measure(f"{name}@0")


@pytest.mark.parametrize("name", NAMES)
def test_spec_is_documented(name):
    spec = REGISTRY[name]
    assert spec.definition and spec.source and spec.version >= 1
    module = importlib.import_module(spec.compute.__module__)
    assert module.__doc__ and ">>>" in module.__doc__, f"{module.__name__} needs a docstring example"


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_round_trips(name):
    spec = REGISTRY[name]
    for pname, param in spec.params.items():
        for value in param.choices or (param.default,):
            m = make_measure(name, 7 if spec.accepts_k else None, **{pname: value})
            assert str(parse_measure(str(m))) == str(m)
            assert parse_measure(str(m)).params == m.params


@pytest.mark.parametrize("name", [n for n in NAMES if not REGISTRY[n].accepts_k])
def test_judged_metrics_take_no_cutoff(name):
    with pytest.raises(InvalidParameterError, match="takes no cut-off"):
        parse_measure(f"{name}@5")


def test_unknown_metric_suggests_close_names():
    with pytest.raises(InvalidParameterError, match="did you mean 'ndcg'"):
        parse_measure("ndgc@5")


@pytest.mark.parametrize("bad", ["ndcg(discount='nope')", "ndcg(gain=3)", "__import__('os')", "ndcg(x=os)",
                                 "ndcg(discount='jk2002', base=1.0)", "", "a b"])
def test_rejects_malformed_strings(bad):
    with pytest.raises(InvalidParameterError):
        parse_measure(bad)


def _modules():
    for info in pkgutil.walk_packages(ragmeter.__path__, "ragmeter."):
        yield importlib.import_module(info.name)


@pytest.mark.parametrize("module", list(_modules()), ids=lambda m: m.__name__)
def test_docstring_examples_run(module, monkeypatch):
    monkeypatch.chdir(ragmeter.__path__[0] + "/../..")
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0


# the public API and its extension point, documented the numpy-doc way (issue 16): the sections
# each one must have, and a runnable example that test_docstring_examples_run runs
PUBLIC_API = {
    ("ragmeter", "evaluate"): ("Parameters", "Returns", "Raises", "Examples"),
    ("ragmeter", "load_dataset"): ("Parameters", "Returns", "Raises", "Examples"),
    ("ragmeter.trec", "evaluate_trec"): ("Parameters", "Returns", "Raises", "Examples"),
    ("ragmeter.judges", "Judge"): ("Parameters", "Examples"),
    ("ragmeter.judges", "Backend"): ("Examples",),
    ("ragmeter.judges.backends", "Backend.complete"): ("Parameters", "Returns", "Raises"),
    ("ragmeter", "EvaluationResult"): ("Parameters", "Raises", "Examples"),
    ("ragmeter.ledger", "Ledger"): ("Parameters", "Raises", "Examples"),
}


@pytest.mark.parametrize("home,name", list(PUBLIC_API), ids=lambda x: x)
def test_public_api_is_documented_numpy_style(home, name):
    obj = importlib.import_module(home)
    for part in name.split("."):
        obj = getattr(obj, part)
    doc = obj.__doc__ or ""
    lines = [line.strip() for line in doc.splitlines()]
    for section in PUBLIC_API[(home, name)]:
        at = lines.index(section) if section in lines else -1
        assert at >= 0 and set(lines[at + 1]) == {"-"}, f"{home}.{name}: no numpydoc section {section!r}"
    if "Examples" in PUBLIC_API[(home, name)]:
        found = [t for t in doctest.DocTestFinder(recurse=False).find(obj, name) if t.examples]
        assert found, f"{home}.{name}: no runnable example"
        assert obj.__module__ in {m.__name__ for m in _modules()}, "the doctest test does not visit it"
