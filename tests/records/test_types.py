"""``records/types.py``: a record's value, and why there is none (only "no record" is final)."""

from __future__ import annotations

from ragmeter.records.types import CannotVerify, RecordValue


def test_a_value_is_described_with_its_unit():
    assert RecordValue(24, "months").describe() == "24 months"
    assert RecordValue(None).describe() == "null" and RecordValue("shipped").describe() == "shipped"


def test_only_no_record_is_final():
    assert CannotVerify("no such order", "no_record").final
    assert not any(CannotVerify("x", kind).final for kind in ("timeout", "error", "refused"))
    assert CannotVerify("x").kind == "error"
