"""Regular expressions a user writes, matched with a time limit.

A pattern with nested or overlapping repeats (``^(a+)+$`` for Python's ``re``, ``(a|aa)+$``
even for ``regex``) takes exponential time on a line that almost matches: 41 characters hang
a run. Every user pattern (``expected_format`` regexes, the
``when`` conditions and ``matches`` constraints of action criteria) is compiled and searched
here, with the ``regex`` package's ``timeout``: a search past :data:`TIMEOUT_S` raises
:class:`PatternTimeout`, which the caller turns into a located error or an
unable-to-verify, never a hang.

>>> search("surge|liquid", "Damaged by a power SURGE", ignore_case=True)
True
>>> try:
...     search("(a|aa)+$", "a" * 41 + "!", timeout_s=0.05)
... except PatternTimeout as exc:
...     print(str(exc)[:49])
the regex '(a|aa)+$' did not finish within 0.05 s
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import regex  # type: ignore[import-untyped]

#: The longest one search of one user pattern may take.
TIMEOUT_S = 1.0
FIX = "simplify the regex: no nested or overlapping repeats like (a+)+ or (a|a)*"


class PatternTimeout(Exception):
    """A user pattern's search passed the time limit."""


def check(pattern: Any) -> str | None:
    """Why ``pattern`` is not a usable regular expression, or None when it is."""
    if not isinstance(pattern, str):
        return f"must be a string, got {type(pattern).__name__}"
    try:
        _compiled(pattern, False)
    except (regex.error, RecursionError, OverflowError, ValueError) as exc:
        return f"does not compile ({exc})"
    return None


@lru_cache(maxsize=512)
def _compiled(pattern: str, ignore_case: bool) -> Any:
    return regex.compile(pattern, regex.V0 | (regex.IGNORECASE if ignore_case else 0))


def search(pattern: str, text: str, *, ignore_case: bool = False, timeout_s: float = TIMEOUT_S) -> bool:
    """Whether ``pattern`` is found in ``text``; :class:`PatternTimeout` past ``timeout_s``
    (a pattern that does not compile is a ``ValueError``: check it first with :func:`check`)."""
    try:
        compiled = _compiled(pattern, ignore_case)
    except (regex.error, RecursionError, OverflowError) as exc:
        raise ValueError(f"the regex {pattern[:60]!r} does not compile ({exc})") from None
    try:
        return compiled.search(text, timeout=timeout_s) is not None
    except TimeoutError:
        raise PatternTimeout(f"the regex {pattern[:60]!r} did not finish within {timeout_s:g} s (catastrophic "
                             f"backtracking: nested or overlapping repeats like (a+)+)") from None
