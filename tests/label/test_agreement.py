"""``ragmeter.label.agreement``: Agreement between labelers on relevance grades, and where they disagree."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.label.agreement import (
    agreement_report,
    cohen_kappa,
    fleiss_kappa,
    weighted_kappa,
)
from ragmeter.label.store import LabelStore
from ragmeter.label.tasks import Candidate, Task
from tests.installed import need

A = [2, 0, 3, 1, 0]


B = [2, 1, 3, 1, 2]


def test_cohen_kappa_hand_worked():
    # p_o = 3/5; marginals A: 0->2, 1->1, 2->1, 3->1; B: 1->2, 2->2, 3->1; p_e = (0 + 1*2 + 1*2 + 1*1) / 25
    p_o, p_e = 3 / 5, (1 * 2 + 1 * 2 + 1 * 1) / 25
    assert cohen_kappa(A, B) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert cohen_kappa(A, B) == pytest.approx(0.5)


def test_weighted_kappa_hand_worked():
    # quadratic: observed disagreement sum (i-j)^2 / n = (0 + 1 + 0 + 0 + 4) / 5
    observed = (0 + 1 + 0 + 0 + 4) / 5
    pa = np.bincount(A, minlength=4) / 5
    pb = np.bincount(B, minlength=4) / 5
    expected = sum(pa[i] * pb[j] * (i - j) ** 2 for i in range(4) for j in range(4))
    assert weighted_kappa(A, B) == pytest.approx(1 - observed / expected)
    linear_expected = sum(pa[i] * pb[j] * abs(i - j) for i in range(4) for j in range(4))
    assert weighted_kappa(A, B, weights="linear") == pytest.approx(1 - (0 + 1 + 0 + 0 + 2) / 5 / linear_expected)


def test_fleiss_kappa_hand_worked():
    # 4 items, 3 labelers, grades 0..1: rows are counts per category
    table = np.array([[3, 0], [0, 3], [2, 1], [1, 2]])
    p_i = [(9 - 3) / 6, (9 - 3) / 6, (4 + 1 - 3) / 6, (1 + 4 - 3) / 6]
    p_g = [(3 + 0 + 2 + 1) / 12, (0 + 3 + 1 + 2) / 12]
    p_e = p_g[0] ** 2 + p_g[1] ** 2
    assert fleiss_kappa(table) == pytest.approx((np.mean(p_i) - p_e) / (1 - p_e))


def test_undefined_kappas_say_so():
    assert cohen_kappa([], []) is None
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None  # chance agreement is 1: 0/0
    assert weighted_kappa([2, 2], [2, 2]) is None
    assert fleiss_kappa(np.array([[3, 0], [3, 0]])) is None
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 2])


grades = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=40)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(grades)
def test_cohen_and_weighted_kappa_equal_scikit_learn(pairs):
    metrics = need("sklearn.metrics")
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ours = cohen_kappa(a, b)
    if ours is None:
        return
    assert ours == pytest.approx(metrics.cohen_kappa_score(a, b, labels=[0, 1, 2, 3]), abs=1e-12)
    for w in ("linear", "quadratic"):
        theirs = metrics.cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights=w)
        mine = weighted_kappa(a, b, weights=w)
        assert mine == pytest.approx(theirs, abs=1e-12) if mine is not None else np.isnan(theirs)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # statsmodels' own 0/0
@settings(max_examples=150, deadline=None)
@given(st.integers(2, 6).flatmap(lambda m: st.lists(st.lists(st.integers(0, 3), min_size=m, max_size=m),
                                                    min_size=1, max_size=30)))
def test_fleiss_kappa_equals_statsmodels(rows):
    inter = need("statsmodels.stats.inter_rater")
    table = np.array([np.bincount(r, minlength=4) for r in rows])
    ours = fleiss_kappa(table)
    theirs = inter.fleiss_kappa(table, method="fleiss")
    if ours is None:
        assert np.isnan(theirs)  # every label in one category: 0/0, which statsmodels gives as nan
    else:
        assert ours == pytest.approx(theirs, abs=1e-12)


def _tasks() -> list[Task]:
    return [Task(0, "q1", "first?", "", tuple(Candidate(c, "t", "retrieved") for c in ("c1", "c2", "c3"))),
            Task(1, "q2", "second?", "", tuple(Candidate(c, "t", "retrieved") for c in ("c3", "c4")))]


def _labeled(tmp_path) -> LabelStore:
    store = LabelStore(tmp_path / "l.jsonl")
    for who, q, c, g in [("alice", "q1", "c1", 2), ("alice", "q1", "c2", 0), ("alice", "q1", "c3", 3),
                         ("alice", "q2", "c3", 1), ("alice", "q2", "c4", 0),
                         ("bob", "q1", "c1", 2), ("bob", "q1", "c2", 1), ("bob", "q1", "c3", 3),
                         ("bob", "q2", "c3", 1), ("bob", "q2", "c4", 2)]:
        store.append({"labeler": who, "sample": q, "kind": "grade", "chunk": c, "grade": g})
    store.append({"labeler": "carol", "sample": "q1", "kind": "final", "chunk": "c2", "grade": 1})
    return store


def test_agreement_report_lists_disagreements(tmp_path):
    store = _labeled(tmp_path)
    rep = agreement_report(_tasks(), store.state)
    (pair,) = rep["pairs"]
    assert pair["labelers"] == ["alice", "bob"] and pair["items"] == 5
    assert pair["cohen_kappa"] == pytest.approx(0.5)
    assert [(d["sample"], [c["chunk"] for c in d["chunks"]], d["open"]) for d in rep["disagreements"]] == [
        ("q1", ["c2"], 0), ("q2", ["c4"], 1)]
    store.append({"labeler": "dave", "sample": "q1", "kind": "grade", "chunk": "c1", "grade": 2})
    fleiss = agreement_report(_tasks(), store.state)["fleiss"]
    assert fleiss["items"] == 1 and fleiss["fleiss_kappa"] is None  # one pair graded by all three, all 2: 0/0
    store.close()
