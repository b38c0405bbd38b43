"""Chunk ids coded by their bytes (core/codes.py) against a dict: equal ids, equal codes, and
each code's id in the vocabulary, over batches of any ids (unicode, lone surrogates, empty,
blank, every length around the word sizes, past the packed limit)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.core import codes
from ragmeter.core.codes import MAX_PACKED, IdCodes
from ragmeter.core.columns import coded

lengths = st.sampled_from([0, 1, 6, 7, 8, 9, 15, 16, 17, 23, 24, 40, 63, 64, 65, 200])
alphabet = st.sampled_from(["a", "b", " ", "\t", "é", "\U0001F600", "\x00", "\ud800", ",", '"'])
an_id = st.one_of(st.text(max_size=12), lengths.flatmap(lambda n: st.lists(alphabet, min_size=n, max_size=n)
                                                        .map("".join)))


@pytest.mark.slow
@given(batches=st.lists(st.lists(an_id, max_size=30), min_size=1, max_size=5))
@settings(max_examples=300, deadline=None)
def test_codes_are_a_dicts_numbering(batches: list[list[str]]) -> None:
    table = IdCodes()
    seen: dict[str, int] = {}
    for batch in batches:
        got = table.code_strings(batch)
        assert got is not None and got.dtype == np.int32 and len(got) == len(batch)
        for text, code in zip(batch, got.tolist()):
            assert seen.setdefault(text, code) == code  # one id, one code, batch after batch
            assert table.vocabulary[code] == text
    assert len(set(seen.values())) == len(seen) == len(table.vocabulary)  # different ids, different codes
    assert table.blank.tolist() == [not t.strip() for t in table.vocabulary]


def test_ids_of_every_width_side_by_side() -> None:
    """Ids of 7 and 8 bytes (one word, then two) and the same prefix with a zero byte after it."""
    ids = ["abcdefg", "abcdefgh", "abcdefg\x00", "abcdefgh\x00", "", "\x00", "x" * MAX_PACKED, "x" * (MAX_PACKED + 1)]
    table = IdCodes()
    first = table.code_strings(ids)
    again = table.code_strings(ids[::-1])
    assert first is not None and again is not None
    assert len(set(first.tolist())) == len(ids)
    assert again.tolist() == first.tolist()[::-1]
    assert [table.vocabulary[c] for c in first.tolist()] == ids


def test_a_shared_key_is_reported_before_the_table_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two different ids of 8 bytes or more with one key (forced: every word after the first
    weighs 0) are reported, and the table is left as it was; ``coded`` then numbers by a dict."""
    monkeypatch.setattr(codes, "_K", np.array([1] + [0] * 8, dtype=np.uint64))
    table = IdCodes()
    assert table.code_strings(["abcdefgh1", "x"]) is not None
    before = list(table.vocabulary)
    assert table.code_strings(["abcdefgh2"]) is None  # its first word and length are abcdefgh1's
    assert table.vocabulary == before
    assert table.code_strings(["abcdefghA", "abcdefghB"]) is None  # within one batch
    vocabulary, (a, b) = coded(["abcdefgh1", "abcdefgh2", "x"], ["abcdefgh2"])
    assert vocabulary == ["abcdefgh1", "abcdefgh2", "x"] and a.tolist() == [0, 1, 2] and b.tolist() == [1]


def test_codes_of_spans_in_a_buffer() -> None:
    data = b'["d1", "d22", "d1"]'
    table = IdCodes()
    got = table.code_spans(data, np.array([2, 8, 15]), np.array([2, 3, 2]))
    assert got is not None and got.tolist() == [0, 1, 0] and table.vocabulary == ["d1", "d22"]
