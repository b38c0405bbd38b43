"""RankedBatch built from chunk-id codes by array operations (metrics/batch.py) against the
plain Python it replaced: each rank's grade looked up in its query's labels, one id at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ragmeter.metrics.batch as batch
from ragmeter.metrics.batch import RankedBatch

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
