"""``ragmeter.core.display``: Text from data, made safe for where it is shown: a terminal, a spreadsheet cell."""

from __future__ import annotations

import pytest

from ragmeter.core.display import spreadsheet_safe, terminal_safe


def test_terminal_safe_escapes_every_control_character():
    for code in [*range(0x00, 0x20), *range(0x7f, 0xa0), 0x202a, 0x202e, 0x2066, 0x2069, 0x200f]:
        out = terminal_safe(f"a{chr(code)}b")
        assert out.isprintable() and out.startswith("a\\") and out.endswith("b"), (hex(code), out)
    assert terminal_safe("plain ids, ünïcode and [brackets]") == "plain ids, ünïcode and [brackets]"


@pytest.mark.parametrize("cell,expected", [
    ("=1+1", "'=1+1"), ("+1 (555)", "'+1 (555)"), ("-cmd", "'-cmd"), ("@x", "'@x"), ("\tx", "'\tx"),
    ("\rx", "'\rx"), ("-0.5", "-0.5"), ("+3", "+3"), ("1e-3", "1e-3"), ("q1", "q1"), ("", ""),
])
def test_spreadsheet_safe(cell, expected):
    assert spreadsheet_safe(cell) == expected
