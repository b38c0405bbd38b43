"""Compare a stated value with a recorded one after normalising both.

The record decides how the statement is read:

- a boolean record: yes / no / true / false;
- a number, or text that reads as one exact quantity (``24 months``, ``$1,299``): the
  statement must read as a quantity too (digits with separators, number words, units,
  currencies); amounts are compared exactly after converting within a unit group
  (``2 years`` = ``24 months``, ``2 weeks`` = ``14 days``). Units that do not convert
  exactly (months and days, business days and days) are undecidable; quantities of
  different kinds (a price against a duration), or in different currencies, differ;
- a date: the statement must read as a date; a statement that can mean two dates
  (``05/10/2026``) that matches the record in only one reading is undecidable, and one that
  names only the month of the recorded day is undecidable too;
- anything else: text, equal when the same after NFKC, case folding, collapsed spaces,
  ``_`` and ``-`` read as spaces, and end punctuation dropped.

A NaN or an infinity on either side (:mod:`ragmeter.core.finite`) is undecidable too.
A statement that cannot be read the way the record needs (``about 1,300``, ``3-5 days``,
``soon``) is undecidable: it is reported as such, never guessed into a pass or a fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ragmeter.core.finite import NOT_FINITE, non_finite
from ragmeter.records.dates import DateValue, read_date
from ragmeter.records.quantities import Quantity, clean, read_quantity
from ragmeter.records.types import JsonScalar

# Goes into provenance with every fact verdict; raise it whenever a rule here could change a verdict.
# 1: first version.
NORMALISATION_VERSION = 1

Outcome = Literal["equal", "different", "undecidable"]
_KNOWN_UNITS = ("second", "month", "business_day", "percent", "currency")
_TIME_UNITS = ("second", "month", "business_day")
_TRUE, _FALSE = {"true", "yes", "y"}, {"false", "no", "n"}


@dataclass(frozen=True)
class Comparison:
    outcome: Outcome
    stated: str  # the statement as normalised
    recorded: str  # the record as normalised
    note: str = ""  # why, for undecidable or different


def normal_text(value: object) -> str:
    return " ".join(clean(str(value)).replace("_", " ").replace("-", " ").split())


def read_record(value: JsonScalar, unit: str | None) -> bool | Quantity | DateValue | str:
    """How a recorded value is compared: boolean, quantity, date or text."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        q = read_quantity(repr(value) if isinstance(value, float) else str(value), unit)
        if q is not None:
            return q
    if isinstance(value, str):
        d = read_date(value) if not unit else None
        if d is not None:
            return d
        q = read_quantity(value, unit)
        if q is not None:
            return q
    return normal_text(value if value is not None else "")


def compare(stated: JsonScalar, stated_unit: str | None, recorded: JsonScalar,
            recorded_unit: str | None = None) -> Comparison:
    """Whether ``stated`` (with ``stated_unit``) says the same as ``recorded`` (with its unit)."""
    for side, value in (("the record", recorded), ("the statement", stated)):
        if non_finite(value):  # NaN equals nothing: compared, it would read as a difference (core.finite)
            return Comparison("undecidable", normal_text(stated), normal_text(recorded),
                              f"{side} holds {value!r}, {NOT_FINITE}")
    record = read_record(recorded, recorded_unit)
    text = "" if stated is None else (repr(stated) if isinstance(stated, float) else str(stated))
    if isinstance(record, bool):
        word = normal_text(text)
        said = True if word in _TRUE else False if word in _FALSE else None
        if said is None:
            return Comparison("undecidable", word, str(record).lower(), f"{text!r} is not yes or no")
        return Comparison("equal" if said == record else "different", str(said).lower(), str(record).lower())
    if isinstance(record, Quantity):
        q = read_quantity(text, stated_unit)
        if q is None:
            return Comparison("undecidable", normal_text(text), record.describe(),
                              f"{text!r} is not one exact quantity")
        return _quantities(q, record)
    if isinstance(record, DateValue):
        d = read_date(text)
        if d is None:
            return Comparison("undecidable", normal_text(text), record.describe(), f"{text!r} is not a date")
        return _dates(d, record)
    said_text = normal_text(text if not stated_unit else f"{text} {stated_unit}")
    if said_text in _TRUE | _FALSE and record in _TRUE | _FALSE:
        same = (said_text in _TRUE) == (record in _TRUE)
        return Comparison("equal" if same else "different", said_text, record)
    if said_text == record or (stated_unit and normal_text(text) == record):
        return Comparison("equal", said_text, record)
    return Comparison("different", said_text, record)


def _quantities(s: Quantity, r: Quantity) -> Comparison:
    stated, recorded = s.describe(), r.describe()
    if s.unit is not None and r.unit is not None and s.unit != r.unit:
        if s.unit in _TIME_UNITS and r.unit in _TIME_UNITS:
            return Comparison("undecidable", stated, recorded,
                              f"{_unit_name(s.unit)} and {_unit_name(r.unit)} do not convert exactly")
        if s.unit in _KNOWN_UNITS and r.unit in _KNOWN_UNITS:
            return Comparison("different", stated, recorded,
                              f"a {_unit_name(s.unit)} amount where the record holds {_unit_name(r.unit)}")
        return Comparison("undecidable", stated, recorded, f"units {s.unit!r} and {r.unit!r} are not comparable")
    if {s.unit, r.unit} == {"percent", None} and s.amount != r.amount and (
            s.amount == r.amount * 100 or r.amount == s.amount * 100):
        return Comparison("undecidable", stated, recorded, "one side may be a fraction, the other a percentage")
    if s.currencies is not None and r.currencies is not None and not s.currencies & r.currencies:
        return Comparison("different", stated, recorded, "a different currency")
    return Comparison("equal" if s.amount == r.amount else "different", stated, recorded)


def _dates(s: DateValue, r: DateValue) -> Comparison:
    stated, recorded = s.describe(), r.describe()
    common = s.candidates & r.candidates
    if common and len(s.candidates) == 1 and len(r.candidates) == 1:
        return Comparison("equal", stated, recorded)
    if common:
        which = s.text if len(s.candidates) > 1 else r.text
        return Comparison("undecidable", stated, recorded, f"{which!r} can be read as more than one date")

    def month(c: tuple[int, int, int | None]) -> tuple[int, int]:
        return c[0], c[1]

    if any(month(a) == month(b) and (a[2] is None or b[2] is None) for a in s.candidates for b in r.candidates):
        side = "the statement" if any(c[2] is None for c in s.candidates) else "the record"
        return Comparison("undecidable", stated, recorded, f"{side} names only the month")
    return Comparison("different", stated, recorded)


def _unit_name(unit: str) -> str:
    return {"second": "days/weeks/hours", "month": "months/years", "business_day": "business days",
            "percent": "percent", "currency": "currency"}.get(unit, unit)
