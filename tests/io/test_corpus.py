"""``ragmeter.io.corpus``: Corpus files: chunk id -> text, as JSONL (``{"id": ..., "text": ...}``) or
CSV (``id,text``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.hostile import FUZZ, hostile_file, only_typed_errors, table_file


@FUZZ
@given(st.one_of(hostile_file(), table_file("id,text")))
def test_corpus(data):
    from ragmeter import load_corpus

    only_typed_errors(data, "c.jsonl", load_corpus)
    only_typed_errors(data, "c.csv", load_corpus)
