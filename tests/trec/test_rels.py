"""One topic's ranking and labels, as form_res_rels.c forms them."""

from __future__ import annotations

from ragmeter.trec.rels import NONPOOL, UNJUDGED, form_res_rels, level_counts, ranked, twice


def test_scores_descending_ties_by_docno_descending():
    assert [d for d, _ in ranked([("a", 1.0), ("c", 1.0), ("b", 2.0), ("d", -0.0), ("e", 0.0)])] == \
        ["b", "c", "a", "e", "d"]


def test_labels_and_counts():
    judged = {"a": 2, "b": 0, "c": -1}
    t = form_res_rels(["x", "a", "c", "b"], judged, level_counts(judged.values()), level=1)
    assert t.labels == [NONPOOL, 2, UNJUDGED, 0]
    assert (t.num_rel, t.num_rel_ret, t.num_nonpool, t.num_unjudged_in_pool, t.num_rel_levels) == (1, 1, 1, 1, 3)
    assert form_res_rels(["x", "a", "c", "b"], judged, level_counts(judged.values()), level=0).num_rel == 2
    assert form_res_rels(["x", "a", "c", "b"], judged, {}, level=1, judged_only=True).labels == [2, 0]


def test_a_topic_without_judged_documents_keeps_the_previous_levels():
    """form_res_rels.c clears none of its level buffer for such a topic (the gain measures read it)."""
    previous = level_counts([1, 1, 0])
    assert level_counts([-1, -1], previous) == {0: 1, 1: 2}
    t = form_res_rels(["a"], {"a": -1}, level_counts([-1], previous), level=1, fresh=False)
    assert t.num_rel == 0 and t.rel_levels == {0: 1, 1: 2}


def test_twice():
    assert twice(["a", "b"]) is None and twice(["a", "b", "a"]) == "a"
