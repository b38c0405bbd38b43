"""``io/formats/base.py``: what formats share: contexts given as texts, and one field per target."""

from __future__ import annotations

import pytest

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.formats.base import content_id, document_chunks, give, ids, texts


def test_a_text_has_one_id_everywhere():
    assert content_id("abc") == content_id("abc") == "text-ba7816bf8f01cfea" != content_id("abc ")


def test_a_second_field_for_one_target_is_refused_naming_both():
    out, given_by = {}, {}
    give(out, "retrieved", "retrieved_contexts", ["a"], given_by)
    with pytest.raises(InvalidInputError, match=r'"contexts" and "retrieved_contexts" both give "retrieved"'):
        give(out, "retrieved", "contexts", ["b"], given_by)
    with pytest.raises(InvalidInputError, match=r'"response" and "answer" both give "answer"'):
        give({"answer": "x"}, "answer", "response", "y", {})


def test_contexts_of_the_wrong_shape_are_named():
    with pytest.raises(InvalidInputError, match="must be a list of texts, got a string"):
        texts({"c": "one passage"}, "c")
    with pytest.raises(InvalidInputError, match="item 2 must be a text, got int"):
        texts({"c": ["a", 2]}, "c")
    with pytest.raises(InvalidInputError, match="must be a list of chunk ids"):
        ids({"c": "id1"}, "c")
    assert document_chunks([{"doc_id": "d1", "text": "a"}, "b"], "docs") == [
        {"id": "d1", "text": "a"}, {"id": content_id("b"), "text": "b"}]
    with pytest.raises(InvalidInputError, match='item 1 must be an object with a "text"'):
        document_chunks([{"doc_id": "d1"}], "docs")
