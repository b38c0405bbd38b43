"""Text from data, made safe for where it is shown: a terminal, a spreadsheet cell.

- :func:`terminal_safe`: ids, questions and reasons come from users' files and from judges.
  Printed raw, an ESC sequence can recolour, retitle or clear the terminal (or, in some
  emulators, write files or links); a carriage return overwrites what was printed; a bidi
  override (U+202E) reorders what is shown. Every C0 and C1 control character, DEL and the
  bidi embedding/override/isolate marks are shown escaped (``\\x1b``, ``\\u202e``); ``\\n`` and
  ``\\t`` too unless ``multiline``. Rich markup is a separate matter: rich tables get
  ``rich.text.Text`` cells (never parsed for ``[red]``), see :mod:`ragmeter.report.terminal`.
- :func:`spreadsheet_safe`: a CSV cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
  carriage return is run as a formula by Excel, LibreOffice and Google Sheets (``=HYPERLINK``,
  ``=cmd|...``). As OWASP's CSV-injection guidance says, such a cell gets a leading ``'`` and is
  then shown as text; a plain number (``-0.5``) is left as it is.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: object, *, multiline: bool = False) -> str:
    """``text`` with every control character shown as an escape.

    >>> terminal_safe("q1\\x1b[2J\\rdone\\u202e")
    'q1\\\\x1b[2J\\\\x0ddone\\\\u202e'
    >>> terminal_safe("two\\nlines", multiline=True)
    'two\\nlines'
    """
    s = str(text)
    return (_UNSAFE if multiline else _UNSAFE_ONE_LINE).sub(_escape, s)


def spreadsheet_safe(cell: object) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula.

    >>> spreadsheet_safe('=HYPERLINK("http://x","y")'), spreadsheet_safe("-0.5"), spreadsheet_safe("q1")
    ('\\'=HYPERLINK("http://x","y")', '-0.5', 'q1')
    """
    s = str(cell)
    if s.startswith(_FORMULA_START) and not _NUMBER.fullmatch(s):
        return "'" + s
    return s
