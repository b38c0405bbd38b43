"""Reading stated dates in the common written forms, keeping what is ambiguous ambiguous.

>>> read_date("2026-10-05").candidates == read_date("5 October 2026").candidates == read_date("Oct 5, 2026").candidates
True
>>> sorted(read_date("05/10/2026").candidates)   # 5 October or May 10: both kept
[(2026, 5, 10), (2026, 10, 5)]
>>> read_date("October 2026").candidates        # a month, not a day
frozenset({(2026, 10, None)})

Month names are read from a fixed English table (never the process locale). A time of day
after an ISO date is dropped (the date as written is compared, no time-zone shift).
Two-digit years are 20xx below 70 and 19xx from 70.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

from ragmeter.records.quantities import clean

_MONTHS = {n: i for i, n in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
     "december"], start=1)}
_MONTHS.update({n[:3]: i for n, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_WEEKDAYS = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?"
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4}|\d{2})"

@dataclass(frozen=True)
class DateValue:
    """Every (year, month, day) the text can mean: one, or two for 05/10/2026."""

    candidates: frozenset[tuple[int, int, int | None]]
    text: str

    def describe(self) -> str:
        return " or ".join(f"{y:04d}-{m:02d}" + (f"-{d:02d}" if d else "") for y, m, d in sorted(
            self.candidates, key=lambda c: (c[0], c[1], c[2] or 0)))


def _year(text: str) -> int:
    y = int(text)
    if len(text) == 2:
        y += 2000 if y < 70 else 1900
    return y


def _valid(y: int, m: int, d: int | None) -> bool:
    if not 1 <= m <= 12 or not 1 <= y <= 9999:
        return False
    return d is None or 1 <= d <= calendar.monthrange(y, m)[1]


_PATTERNS = [
    ("iso", re.compile(r"^(?P<year>\d{4})[-/.](?P<month>\d{1,2})[-/.](?P<day>\d{1,2})(?:[t ]\d{1,2}:\d{2}.*)?$")),
    ("iso_month", re.compile(r"^(?P<year>\d{4})-(?P<month>\d{1,2})$")),
    ("dmy_name", re.compile(r"^" + _DAY + r"(?:\s+of)?[\s\-/]+" + _MONTH + r",?[\s\-/]+" + _YEAR + r"$")),
    ("mdy_name", re.compile(r"^" + _MONTH + r"[\s\-/]+" + _DAY + r",?[\s\-/]+" + _YEAR + r"$")),
    ("month_name", re.compile(r"^" + _MONTH + r",?\s+(?P<year>\d{4})$")),
    ("dotted", re.compile(r"^(?P<a>\d{1,2})\.(?P<b>\d{1,2})\.(?P<year>\d{4}|\d{2})$")),
    ("numeric", re.compile(r"^(?P<a>\d{1,2})[/-](?P<b>\d{1,2})[/-](?P<year>\d{4}|\d{2})$")),
]


def read_date(text: str) -> DateValue | None:
    """The date(s) ``text`` can mean, or None when it is not a date in a known form."""
    t = clean(text)
    t = re.sub(r"^(?:on|by|since|from)\s+", "", t)
    t = re.sub(r"^" + _WEEKDAYS + r",?\s+", "", t)
    for kind, pattern in _PATTERNS:
        m = pattern.match(t)
        if not m:
            continue
        g = m.groupdict()
        found: set[tuple[int, int, int | None]] = set()
        if kind in ("iso", "iso_month"):
            found.add((int(g["year"]), int(g["month"]), int(g["day"]) if g.get("day") else None))
        elif kind in ("dmy_name", "mdy_name", "month_name"):
            found.add((_year(g["year"]), _MONTHS[g["month"]], int(g["day"]) if g.get("day") else None))
        elif kind == "dotted":  # 5.10.2026 is day.month.year wherever dots are written
            found.add((_year(g["year"]), int(g["b"]), int(g["a"])))
        else:  # 05/10/2026: day/month or month/day
            a, b, y = int(g["a"]), int(g["b"]), _year(g["year"])
            found.update({(y, b, a), (y, a, b)})
        valid = frozenset(c for c in found if _valid(*c))
        return DateValue(valid, text) if valid else None
    return None
