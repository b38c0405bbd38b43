"""``records/quantities.py``: amounts read from text, as formulas."""

from __future__ import annotations

from decimal import Decimal

from ragmeter.records import read_quantity


def test_quantity_amounts_as_formulas():
    assert read_quantity("1.5 years").amount == Decimal("1.5") * 12 and read_quantity("1.5 years").unit == "month"
    assert read_quantity("2 weeks").amount == 2 * 7 * 24 * 3600
    assert read_quantity("48 hours").amount == 48 * 3600
    assert read_quantity("$1.2 million").amount == Decimal("1.2") * 1_000_000
    assert read_quantity("one hundred and twenty-five thousand").amount == (100 + 25) * 1000
    assert read_quantity("a dozen").amount == 12
    assert read_quantity("$5").currencies == {"USD", "CAD", "AUD", "NZD", "SGD", "HKD"}
    assert read_quantity("5 EUR").currencies == {"EUR"} and read_quantity("5 SEK").currencies == {"SEK"}
    assert read_quantity("$5 EUR") is None  # contradicts itself
