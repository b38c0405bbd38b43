"""Whole numbers read from text files (qrels grades, ranks), bounded to 64 bits.

``int(text)`` takes any length: a 5000-digit grade is Python's int-to-str ``ValueError``, a
400-digit one reads but then overflows ``float(grade)`` or an int64 column. Grades here are
64-bit signed integers, as trec_eval's ``long``.
"""

from __future__ import annotations

import re

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
_WHOLE = re.compile(r"[+-]?[0-9]+")


def whole_number(text: str | bytes) -> int | None:
    """The integer ``text`` spells (optional sign, digits), None when it spells none or its
    value does not fit 64 bits.

    >>> whole_number("3"), whole_number(b"-0002"), whole_number("9" * 5000), whole_number("1.5")
    (3, -2, None, None)
    """
    s = text.decode("ascii", "replace") if isinstance(text, bytes) else text
    s = s.strip()
    if not _WHOLE.fullmatch(s):
        return None
    digits = s.lstrip("+-").lstrip("0")
    if len(digits) > 19:
        return None
    value = int(s)
    return value if INT64_MIN <= value <= INT64_MAX else None
