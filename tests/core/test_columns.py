"""LabelColumns: the ranked ids and labels it is built from read back the same, through cuts,
joins (one vocabulary or several) and pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.core.columns import LabelColumns

ids = st.text(min_size=1, max_size=5)
samples = st.lists(st.tuples(st.lists(ids, max_size=5, unique=True),
                             st.dictionaries(ids, st.floats(allow_nan=False, allow_infinity=False), max_size=4)),
                   max_size=8)


def build(rows: list) -> LabelColumns:
    return LabelColumns.from_lists([f"q{i}" for i in range(len(rows))], [r for r, _ in rows], [lab for _, lab in rows])


@pytest.mark.slow
@given(rows=samples, cut=st.integers(0, 8))
@settings(max_examples=200, deadline=None)
def test_views_cuts_and_joins_read_back(rows: list, cut: int) -> None:
    c = build(rows)
    assert len(c) == len(rows)
    assert list(c.retrieved) == [tuple(r) for r, _ in rows] == [c.retrieved[i] for i in range(len(rows))]
    assert list(c.relevance) == [lab for _, lab in rows] == [c.relevance[i] for i in range(len(rows))]
    assert [list(r) for r in c.relevance] == [list(lab) for _, lab in rows]  # label order kept
    cut = min(cut, len(rows))
    head, tail = c.cut(0, cut), c.cut(cut, len(rows))
    assert list(head.retrieved) + list(tail.retrieved) == list(c.retrieved)
    joined = LabelColumns.joined([head, tail])  # one vocabulary: the arrays end to end
    assert joined.vocabulary is c.vocabulary and np.array_equal(joined.ranked, c.ranked)
    apart = LabelColumns.joined([build(rows[:cut]), build(rows[cut:])])  # two vocabularies: coded again
    assert list(apart.retrieved) == list(c.retrieved) and list(apart.relevance) == list(c.relevance)
    assert list(apart.ids) == [f"q{i}" for i in range(cut)] + [f"q{i}" for i in range(len(rows) - cut)]
    back = pickle.loads(pickle.dumps(c))
    assert list(back.retrieved) == list(c.retrieved) and list(back.relevance) == list(c.relevance)


def test_columns_are_equal_when_their_samples_are() -> None:
    a = LabelColumns.from_lists(["q1", "q2"], [["a", "b"], ["b"]], [{"b": 1.0}, {}])
    b = LabelColumns.joined([LabelColumns.from_lists(["q1"], [["a", "b"]], [{"b": 1.0}]),
                             LabelColumns.from_lists(["q2"], [["b"]], [{}])])
    assert a == b
    assert a != LabelColumns.from_lists(["q1", "q2"], [["b", "a"], ["b"]], [{"b": 1.0}, {}])
    assert a != LabelColumns.from_lists(["q1", "q2"], [["a", "b"], ["b"]], [{"b": 2.0}, {}])
