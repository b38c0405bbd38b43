"""``records/pointer.py``: JSON Pointer (RFC 6901) look-ups and the record they give."""

from __future__ import annotations

import pytest

from ragmeter.core.errors import InvalidParameterError
from ragmeter.records.pointer import MISSING, record_from_json, resolve, tokens
from ragmeter.records.types import CannotVerify, RecordValue

DOC = {"foo": ["bar", "baz"], "": 0, "a/b": 1, "m~n": 8, "items": [{"sku": "R2"}]}


@pytest.mark.parametrize("pointer, value", [("", DOC), ("/foo", ["bar", "baz"]), ("/foo/0", "bar"), ("/", 0),
                                            ("/a~1b", 1), ("/m~0n", 8), ("/items/0/sku", "R2")])
def test_the_rfcs_examples_resolve(pointer, value):
    """RFC 6901 section 5's document and pointers (``~1`` is ``/``, ``~0`` is ``~``)."""
    assert resolve(DOC, pointer) == value


@pytest.mark.parametrize("pointer", ["/nope", "/foo/2", "/foo/01", "/foo/-", "/foo/0/deeper"])
def test_an_absent_path_is_missing_not_an_error(pointer):
    assert resolve(DOC, pointer) is MISSING


def test_a_pointer_must_start_with_a_slash():
    with pytest.raises(InvalidParameterError, match="must be empty or start with '/'"):
        tokens("status")


def test_the_found_node_as_a_record():
    at = {"entity": "ORD-1", "attribute": "total", "where": "orders"}
    assert record_from_json(1299, **at) == RecordValue(1299)
    assert record_from_json({"value": 1299, "unit": "USD"}, **at) == RecordValue(1299, "USD")
    assert record_from_json(MISSING, **at) == CannotVerify("orders has no 'total' for 'ORD-1'", "no_record")
    listed = record_from_json([1, 2], **at)
    assert listed.kind == "error" and "is a list, not one value" in listed.reason
