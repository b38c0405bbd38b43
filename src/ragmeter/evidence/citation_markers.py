"""Citation markers in an answer, and the context chunk each names (no model).

``[2]`` names the second chunk that reached the prompt, ``[doc-id]`` the chunk of that id.

>>> resolve("2", ("a", "b", "c")), resolve("[c]", ("a", "b", "c")), resolve("9", ("a",))
('b', 'c', None)
>>> markers("Ships in 5 days [2][claim-steps]. Free [x y].")
('2', 'claim-steps', 'x y')
"""

from __future__ import annotations

import re

_MARKER = re.compile(r"\[([^\[\]\n]{1,80})\]")


def resolve(marker: str, context_ids: tuple[str, ...]) -> str | None:
    """The context chunk a citation marker names: a chunk id, or a 1-based position; None for neither."""
    m = marker.strip().strip("[]").strip()
    if m in context_ids:
        return m
    if m.isdigit() and 1 <= int(m) <= len(context_ids):
        return context_ids[int(m) - 1]
    return None


def markers(text: str) -> tuple[str, ...]:
    """The citation markers written in ``text`` (``[1]``, ``[doc-id]``), in order."""
    return tuple(m.strip() for m in _MARKER.findall(text))
