"""``records/normalise.py``: a stated value against the recorded one: known answers for numbers
with units, money, dates and text, and properties."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.records import compare

E, D, U = "equal", "different", "undecidable"


NUMBERS_WITH_UNITS = [
    ("24 months", None, 24, "months", E),
    ("two years", None, "24 months", None, E),
    ("twenty-four", "months", 24, "months", E),
    ("1.5 years", None, 18, "months", E),
    ("2 weeks", None, "14 days", None, E),
    ("48 hours", None, 2, "days", E),
    ("a year", None, 12, "months", E),
    ("12", None, 24, "months", D),
    ("5 business days", None, "5 days", None, U),  # business and calendar days do not convert
    ("24 months", None, "730 days", None, U),  # months and days do not convert exactly
    ("12 kg", None, 12, "kg", E),
    ("12 kg", None, 12, "lb", U),  # units ragmeter does not know: only the same word matches
    ("$24", None, "24 months", None, D),  # a price where the record holds a duration
    ("3-5 business days", None, 5, "business days", U),  # a range is not one value
    ("about 1,300", None, 1299, None, U),  # an approximation is not checked
    ("twelve", None, 12, None, E),
    ("one hundred and five", None, 105, None, E),
    ("1,000,000", None, 1_000_000, None, E),
    ("1 000 000", None, 1_000_000, None, E),
    ("-3", None, -3, None, E),
    ("1,5", None, 1.5, None, E),  # a decimal comma (a group of one digit is not thousands)
    ("1,500", None, 1500, None, E),  # thousands
    ("1299", None, "1,299.00", None, E),
]


CURRENCY = [
    ("$1,299.00", None, 1299, "USD", E),
    ("USD 1,299", None, 1299, "USD", E),
    ("1299 dollars", None, "$1,299", None, E),
    ("1.299,00 €", None, 1299, "EUR", E),
    ("€1,299", None, 1299, "USD", D),
    ("£5", None, 5, "GBP", E),
    ("$1.2 million", None, 1_200_000, "USD", E),
    ("1.2k", "USD", 1200, "USD", E),
    ("$1,299", None, 1299, "CAD", E),  # "$" is any dollar
    ("US$1,299", None, 1299, "CAD", D),
    ("$89", None, 99, "USD", D),
    ("12.5%", None, 12.5, "%", E),
    ("12.5 percent", None, 12.5, "%", E),
    ("0.125", None, 12.5, "%", U),  # a fraction or a percentage
    ("13%", None, 12.5, "%", D),
]


DATES = [(s, None, "2026-10-05", None, E) for s in (
    "2026-10-05", "5 October 2026", "October 5, 2026", "Oct. 5th, 2026", "Monday, 5 October 2026", "5.10.2026",
    "2026/10/05", "2026-10-05T14:30:00Z", "5-Oct-26", "the 5th of October 2026".removeprefix("the "),
    "on 5 October 2026")] + [
    ("13/10/2026", None, "2026-10-13", None, E),
    ("10/13/2026", None, "2026-10-13", None, E),
    ("05/10/2026", None, "2026-10-05", None, U),  # 5 October or May 10
    ("05/05/2026", None, "2026-05-05", None, E),  # both readings agree
    ("6 October 2026", None, "2026-10-05", None, D),
    ("05/11/2026", None, "2026-10-05", None, D),  # neither reading matches
    ("October 2026", None, "2026-10-05", None, U),  # the month only
    ("November 2026", None, "2026-10-05", None, D),
    ("31/02/2026", None, "2026-02-28", None, U),  # not a date
    ("soon", None, "2026-10-05", None, U),
]


TEXT = [
    ("Shipped", None, "shipped", None, E),
    ("In Transit", None, "IN_TRANSIT", None, E),
    ("  shipped. ", None, "shipped", None, E),
    ("delivered", None, "shipped", None, D),
    ("R2", None, "R2", None, E),
    ("yes", None, True, None, E),
    ("no", None, True, None, D),
    ("maybe", None, True, None, U),
    ("true", None, "Yes", None, E),
]


@pytest.mark.parametrize("stated,unit,recorded,recorded_unit,outcome", NUMBERS_WITH_UNITS + CURRENCY + DATES + TEXT)
def test_normalisation_known_answers(stated, unit, recorded, recorded_unit, outcome):
    assert compare(stated, unit, recorded, recorded_unit).outcome == outcome


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10**12))
def test_separators_never_change_a_number(n):
    assert compare(f"{n:,}", None, n).outcome == E
    assert compare(f"{n:,}".replace(",", " "), None, n).outcome == E
    assert compare(f"${n:,.2f}", None, n, "USD").outcome == E
    german = f"{n:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")
    assert compare(german + " €", None, n, "EUR").outcome == E
    assert compare(f"{n + 1:,}", None, n).outcome == D


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


@settings(max_examples=200, deadline=None)
@given(st.dates(min_value=dt.date(1970, 1, 1), max_value=dt.date(2099, 12, 31)))
def test_written_dates_equal_their_iso_form(d):
    iso = d.isoformat()
    for text in (f"{d.day} {MONTHS[d.month - 1]} {d.year}", f"{MONTHS[d.month - 1]} {d.day}, {d.year}",
                 f"{MONTHS[d.month - 1][:3]} {d.day} {d.year}", f"{d.day}.{d.month}.{d.year}", d.strftime("%Y/%m/%d")):
        assert compare(text, None, iso).outcome == E, text
    numeric = f"{d.day:02d}/{d.month:02d}/{d.year}"
    expected = E if d.day > 12 or d.day == d.month else U
    assert compare(numeric, None, iso).outcome == expected
    assert compare((d + dt.timedelta(days=1)).isoformat(), None, iso).outcome == D


def test_ambiguous_recorded_dates_are_not_guessed():
    assert compare("5 October 2026", None, "05/10/2026").outcome == U  # the record itself can mean two days
    assert compare("7 October 2026", None, "05/10/2026").outcome == D  # neither reading
    assert compare("October 2026", None, "2026-10").outcome == E
    assert compare("5 October 2026", None, "2026-10").outcome == U  # the record names only the month
