"""align() against a per-topic oracle written from trec_eval's rules: sort by score
descending, ties by docno descending, cut at -M, grade or unjudged, -J drops unjudged."""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.trec import ranking
from ragmeter.trec.ranking import align
from ragmeter.trec.reader import Qrels, TrecRun

TOPICS = ["q1", "q2", "q10", "q3"]
DOCS = [f"d{i}" for i in range(12)]


@st.composite
def cases(draw):
    qrels = {(t, d): draw(st.integers(-1, 3)) for t in draw(st.lists(st.sampled_from(TOPICS), min_size=1, unique=True))
             for d in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))}
    run = []
    for t in draw(st.lists(st.sampled_from(TOPICS), min_size=1, unique=True)):
        for d in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=True)):
            run.append((t, d, draw(st.sampled_from([0.5, 1.0, 1.5, 2.0]))))  # many ties
    layout = draw(st.sampled_from(["ranked", "grouped", "shuffled"]))
    if layout == "ranked":  # as most files come: topic by topic, by score (ties in any order)
        run.sort(key=lambda r: (TOPICS.index(r[0]), -r[2]))
    elif layout == "grouped":
        run.sort(key=lambda r: TOPICS.index(r[0]))
    else:
        run = draw(st.permutations(run))
    chunk = draw(st.integers(1, 7))  # the run table in chunks of this many rows (boundaries inside topics and ties)
    return qrels, run, draw(st.sampled_from([None, 1, 3])), draw(st.booleans()), chunk


def oracle(qrels, run, max_docs, judged_only):
    out = {}
    for topic in {t for t, _, _ in run} & {t for t, _ in qrels}:
        docs = [(d, s) for t, d, s in run if t == topic]
        docs.sort(key=lambda x: x[0].encode(), reverse=True)
        docs.sort(key=lambda x: -x[1])  # stable: ties stay docno descending
        docs = docs[:max_docs] if max_docs else docs
        grades = [qrels.get((topic, d), -1) for d, _ in docs]
        labels = [float(g) if g >= 0 else math.nan for g in grades]
        out[topic] = [x for x in labels if not math.isnan(x)] if judged_only else labels
    return out


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(cases())
def test_rankings_equal_the_per_topic_oracle(case):
    qrels, run, max_docs, judged_only, chunk = case
    q = Qrels(pa.Table.from_pydict({"qid": [t for t, _ in qrels], "docno": [d for _, d in qrels],
                                    "rel": list(qrels.values())}))
    table = pa.Table.from_pydict({"qid": [t for t, _, _ in run], "docno": [d for _, d, _ in run],
                                  "score": [s for _, _, s in run]})
    r = TrecRun(pa.Table.from_batches(table.to_batches(max_chunksize=chunk)), "x")
    if not {t for t, _, _ in run} & {t for t, _ in qrels}:
        return  # refused with a clear error (tested elsewhere)
    expected = oracle(qrels, run, max_docs, judged_only)
    for long_column in (False, True):  # True: the path of a column over 1M rows (looked up in two halves)
        with mock.patch.object(ranking, "_SPLIT", 0 if long_column else ranking._SPLIT):
            rk = align(q, r, max_docs=max_docs, judged_only=judged_only)
        labels = rk.labels
        got = {t: labels[rk.offsets[i]:rk.offsets[i + 1]].tolist() for i, t in enumerate(rk.topics)}
        assert got.keys() == expected.keys()
        for t, values in got.items():
            assert np.array_equal(np.array(values), np.array(expected[t]), equal_nan=True), t


@pytest.mark.parametrize("layout", ["ranked", "shuffled"])
@pytest.mark.parametrize("max_docs", [None, 3])
def test_the_long_column_path_refuses_a_document_listed_twice(layout, max_docs):
    """The path of a column over 1M rows (looked up in two halves) refuses duplicates too."""
    from ragmeter.trec.errors import TrecInputError

    rows = [("q1", f"d{i}", 10.0 - i) for i in range(5)] + [("q2", "a", 2.0), ("q2", "b", 1.5), ("q2", "a", 1.0)]
    if layout == "shuffled":
        rows = [rows[i] for i in (5, 0, 6, 1, 7, 2, 3, 4)]
    q = Qrels(pa.table({"qid": ["q1", "q2"], "docno": ["d1", "a"], "rel": [1, 1]}))
    r = TrecRun(pa.table({"qid": [t for t, _, _ in rows], "docno": [d for _, d, _ in rows],
                          "score": [s for _, _, s in rows]}), "x")
    with mock.patch.object(ranking, "_SPLIT", 0), pytest.raises(TrecInputError, match="'a' appears twice"):
        align(q, r, max_docs=max_docs)


@given(st.lists(st.lists(st.sampled_from([0.5, 1.0, 2.0, -1.0, float("inf"), -float("inf")]), min_size=1,
                         max_size=9), min_size=1, max_size=12), st.sampled_from([1, 4, 16, 1 << 16]))
def test_sorting_within_blocks_orders_every_block_by_score_descending(blocks, cells):
    from ragmeter.trec.ranking import _by_score_within

    score = np.array([x for b in blocks for x in b])
    counts = np.array([len(b) for b in blocks])
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    order, ties = _by_score_within(score, starts, counts, cells=cells)
    assert sorted(order.tolist()) == list(range(len(score)))  # a permutation
    ranked, block_of = score[order], np.repeat(np.arange(len(counts)), counts)
    expected = [i for i in range(len(score) - 1) if block_of[i] == block_of[i + 1] and ranked[i] == ranked[i + 1]]
    assert sorted(ties.tolist()) == expected  # tied neighbours within a block, never across blocks
    for a, c in zip(starts, counts):
        block = order[a:a + c]
        assert ((block >= a) & (block < a + c)).all()  # rows stay in their block
        ranked = score[block]
        assert (ranked[1:] <= ranked[:-1]).all()  # descending, infinities included
