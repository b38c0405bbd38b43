"""RankedBatch built from chunk-id codes by array operations (metrics/batch.py) against the
plain Python it replaced: each rank's grade looked up in its query's labels, one id at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragmeter.metrics.batch as batch
from ragmeter.metrics.batch import RankedBatch

pytestmark = pytest.mark.slow  # every test here took over 2 s (durations of 2026-12-01, load 4 to 8)

ids = st.sampled_from(["a", "b", "c", "d", "e", "é", "a b", ""])
queries = st.lists(st.tuples(st.lists(ids, max_size=7),  # duplicates too (a context list may repeat an id)
                             st.dictionaries(ids, st.sampled_from([0.0, 1.0, 2.0, -1.0, 0.5]), max_size=5)),
                   max_size=10)


def reference(ranked: Sequence[Sequence[str]], labels: Sequence[Mapping[str, float]]) -> tuple:
    n = len(ranked)
    width = max((len(r) for r in ranked), default=0)
    grades = np.full((n, width), np.nan)
    for i, (r, lab) in enumerate(zip(ranked, labels)):
        for j, cid in enumerate(r):
            grades[i, j] = lab.get(cid, np.nan) if lab else np.nan
    label_width = max((len(lab) for lab in labels), default=0)
    label_grades = np.full((n, label_width), -np.inf)
    for i, lab in enumerate(labels):
        ordered = sorted(lab.values(), reverse=True)
        label_grades[i, :len(ordered)] = ordered
    return grades, np.array([len(r) for r in ranked]), label_grades, np.array([len(lab) > 0 for lab in labels])


@given(rows=queries, cells=st.sampled_from([1, 3, 1 << 22]))
@settings(max_examples=300, deadline=None)
def test_grades_from_codes_are_the_lookups_one_id_at_a_time(rows: list, cells: int) -> None:
    ranked, labels = [r for r, _ in rows], [lab for _, lab in rows]
    with patch.object(batch, "_COMPARE_CELLS", cells):  # labels compared a few at a time, or all at once
        got = RankedBatch.from_lists(ranked, labels)
    want = reference(ranked, labels)
    np.testing.assert_array_equal(got.grades, want[0])
    np.testing.assert_array_equal(got.lengths, want[1])
    np.testing.assert_array_equal(got.label_grades, want[2])
    np.testing.assert_array_equal(got.has_labels, want[3])


@given(rows=queries, depth=st.integers(1, 8))
@settings(max_examples=200, deadline=None)
def test_a_batch_read_to_a_depth_is_the_whole_batch_cut_there(rows: list, depth: int) -> None:
    from ragmeter.core.columns import LabelColumns

    columns = LabelColumns.from_lists([""] * len(rows), [r for r, _ in rows], [lab for _, lab in rows])
    whole, cut = RankedBatch.from_columns(columns), RankedBatch.from_columns(columns, depth)
    np.testing.assert_array_equal(cut.grades, whole.grades[:, :depth])
    for k in range(1, depth + 1):
        np.testing.assert_array_equal(cut.cut(k), whole.cut(k))
    np.testing.assert_array_equal(cut.lengths, whole.lengths)  # the lists' own lengths (precision's depth)
    np.testing.assert_array_equal(cut.label_grades, whole.label_grades)


label_ids = st.text(alphabet=st.sampled_from("abc\\\"é\x00\u2028 "), min_size=1, max_size=4).filter(str.strip)


grades = st.one_of(st.integers(-2, 3), st.sampled_from([0.5, 1.0, 2.0, -0.0, 1e-7]))


labels = st.one_of(st.none(), st.lists(label_ids, max_size=4, unique=True),
                   st.dictionaries(label_ids, grades, max_size=4))


def _old_batch(ranked, labels) -> RankedBatch:
    """The row-by-row build ``from_lists`` replaced."""
    n = len(ranked)
    grades = np.full((n, max((len(r) for r in ranked), default=0)), np.nan)
    label_grades = np.full((n, max((len(lab) for lab in labels), default=0)), -np.inf)
    for i, (ids_, lab) in enumerate(zip(ranked, labels)):
        if lab:
            grades[i, : len(ids_)] = [lab.get(cid, np.nan) for cid in ids_]
            label_grades[i, : len(lab)] = sorted(lab.values(), reverse=True)
    return RankedBatch(grades, np.array([len(r) for r in ranked], dtype=np.int64), label_grades,
                       np.array([len(lab) > 0 for lab in labels], dtype=bool))


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning", "ignore::RuntimeWarning")
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from("abcdefg"), max_size=6, unique=True),
                          st.dictionaries(st.sampled_from("abcdefgh"), st.sampled_from([0.0, 1.0, 2.0, -1.0]),
                                          max_size=4)), max_size=6))
def test_ranked_batch_scattered_at_once_is_the_row_by_row_batch(pairs):
    ranked, labels = [p[0] for p in pairs], [p[1] for p in pairs]
    new, old = RankedBatch.from_lists(ranked, labels), _old_batch(ranked, labels)
    for a, b in ((new.grades, old.grades), (new.lengths, old.lengths), (new.label_grades, old.label_grades),
                 (new.has_labels, old.has_labels)):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype and a.shape == b.shape
