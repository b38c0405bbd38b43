"""The fingerprinted duplicate check refuses exactly the runs a plain set check refuses."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter import InvalidInputError
from ragmeter.trec import duplicates
from ragmeter.trec.duplicates import _Words, refuse_duplicates

# Short alphabets and shared prefixes/suffixes make near-collisions (same head and tail,
# different middle) and real duplicates common.
docnos = st.builds(lambda pre, mid, suf: pre + mid + suf,
                   st.sampled_from(["", "d", "doc-00000", "msmarco_passage_"]),
                   st.text(alphabet="ab9é", max_size=6),
                   st.sampled_from(["", "x", "-tail-000"]))


def check(values: list[str], counts: list[int]) -> str | None:
    """Run the check; the duplicated docno it names, or None when it passes."""
    starts = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
    try:
        refuse_duplicates(pa.array(values, pa.string()), starts, np.asarray(counts, np.int64),
                          np.arange(len(counts)), [f"t{i}" for i in range(len(counts))], "run")
    except InvalidInputError as exc:
        return str(exc)
    return None


def oracle(values: list[str], counts: list[int]) -> set[str]:
    dups, at = set(), 0
    for c in counts:
        span = values[at:at + c]
        dups |= {v for v in span if span.count(v) > 1}
        at += c
    return dups


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(docnos, max_size=12), min_size=1, max_size=8), st.sampled_from([1 << 3, 1 << 14]))
def test_refuses_exactly_when_a_topic_lists_a_document_twice(topics, cells):
    values = [d for t in topics for d in t]
    counts = [len(t) for t in topics]
    old, duplicates.CHUNK_CELLS = duplicates.CHUNK_CELLS, cells  # many chunks, and one
    try:
        message = check(values, counts)
    finally:
        duplicates.CHUNK_CELLS = old
    dups = oracle(values, counts)
    if not dups:
        assert message is None
    else:
        assert message is not None and any(f"document {d!r} appears twice" in message for d in dups)


@given(st.lists(docnos, min_size=1, max_size=30), st.integers(0, 5))
def test_equal_strings_get_equal_fingerprints_anywhere_in_the_buffer(values, cut):
    array = pa.array(values, pa.string()).slice(min(cut, len(values) - 1))  # a non-zero array offset too
    fp = _Words(array).fingerprints(0, len(array))
    texts = array.to_pylist()
    for i, a in enumerate(texts):
        for j, b in enumerate(texts):
            if a == b:
                assert fp[i] == fp[j]


def test_same_head_and_tail_is_only_a_candidate_not_a_duplicate():
    a, b = "msmarco_passage_AAAA_00000001", "msmarco_passage_BBBB_00000001"
    words = _Words(pa.array([a, b]))
    assert words.fingerprints(0, 2)[0] == words.fingerprints(0, 2)[1]  # a real collision...
    assert check([a, b], [2]) is None  # ...settled by the exact check


def test_a_duplicate_in_the_last_bytes_of_the_buffer_is_found():
    assert "document 'z' appears twice for topic 't1'" in check(["abcdefghij", "z", "y", "z"], [1, 3])


def test_topics_of_different_lengths_and_empty_topics():
    assert check(["a", "b", "c", "a"], [1, 0, 3]) is None
    assert "'a' appears twice for topic 't2'" in check(["a", "b", "a", "c", "a"], [1, 0, 4])


def test_large_string_arrays_are_checked_exactly():
    array = pa.array(["a", "b", "a"], pa.large_string())
    with pytest.raises(InvalidInputError, match="'a' appears twice"):
        refuse_duplicates(array, np.array([0]), np.array([3]), np.array([0]), ["q"], "run")


def test_a_real_fingerprint_equal_to_the_padding_value_is_still_compared(monkeypatch):
    """Short topics are padded with 0xFFFFFFFF; a docno hashing to that value (odds 2^-32)
    must not hide among the padding."""
    monkeypatch.setattr(_Words, "fingerprints", lambda self, a, b: np.full(b - a, 2**32 - 1, np.uint32))
    assert "'z' appears twice for topic 't0'" in check(["z", "z", "a"], [2, 1])


@given(st.lists(st.lists(docnos, max_size=6), min_size=1, max_size=5), st.lists(st.integers(1, 4), min_size=1))
def test_a_column_in_several_chunks_gives_the_same_fingerprints(pieces, topic_sizes):
    values = [d for p in pieces for d in p]
    chunked = pa.chunked_array([pa.array(p, pa.string()) for p in pieces], pa.string())
    assert (_Words(chunked).fingerprints(0, len(values)) == _Words(pa.array(values, pa.string())).fingerprints(
        0, len(values))).all()
    counts, left = [], len(values)
    for size in topic_sizes:  # topics that straddle chunk boundaries
        counts.append(min(size, left))
        left -= counts[-1]
    counts[-1] += left
    starts = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
    expected = check(values, counts)
    try:
        refuse_duplicates(chunked, starts, np.asarray(counts), np.arange(len(counts)),
                          [f"t{i}" for i in range(len(counts))], "run")
        got = None
    except InvalidInputError as exc:
        got = str(exc)
    assert (got is None) == (expected is None)


@given(st.lists(st.lists(st.integers(0, 99).map(str), max_size=5), min_size=1, max_size=5), st.data())
def test_take_by_chunks_equals_take(pieces, data):
    from ragmeter.trec.ranking import _take

    chunked = pa.chunked_array([pa.array(p, pa.string()) for p in pieces], pa.string())
    n = len(chunked)
    rows = np.array(data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=8 if n else 0)), dtype=np.int64)
    assert _take(chunked, rows).to_pylist() == [chunked[int(i)].as_py() for i in rows]
