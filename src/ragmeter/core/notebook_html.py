"""Small HTML tables for notebooks (``_repr_html_``) and short texts for ``repr``.

Everything shown is escaped; a long text is cut with an ellipsis; a long table shows its
first rows and says how many it left out.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

MAX_ROWS = 10
MAX_TEXT = 80


def short(text: Any, limit: int = MAX_TEXT) -> str:
    """``text`` as a string of at most ``limit`` characters.

    >>> short("a" * 100, 10)
    'aaaaaaaaa…'
    """
    s = "" if text is None else str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def table_html(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], *, note: str = "",
               max_rows: int = MAX_ROWS) -> str:
    """An escaped HTML table with a bold title line; ``note`` goes under it."""
    shown = rows[:max_rows]
    head = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(short(c))}</td>" for c in r) + "</tr>"
                   for r in shown)
    more = len(rows) - len(shown)
    notes = [note] if note else []
    if more > 0:
        notes.append(f"{more} more row{'s' if more != 1 else ''} not shown")
    foot = "".join(f"<div style='color:#666'>{html.escape(n)}</div>" for n in notes)
    return (f"<div class='ragmeter'><b>{html.escape(title)}</b>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{foot}</div>")
