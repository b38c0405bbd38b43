"""``ragmeter.trec.needs_arrow``: pyarrow is asked for only where Arrow runs (the core install's
plain-Python path: tests/core/test_extras.py)."""

from __future__ import annotations

import sys

import pytest

from ragmeter.core.errors import MissingExtraError
from ragmeter.trec.needs_arrow import arrow_installed, require_arrow


def test_a_blocked_pyarrow_is_named_with_what_needed_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as when the extra is not installed
    assert not arrow_installed()
    with pytest.raises(MissingExtraError) as refused:
        require_arrow("the arrow engine")
    assert str(refused.value) == ("ragmeter trec (the arrow engine) needs pyarrow, which the core install leaves "
                                  "out. Fix: pip install 'ragmeter[trec]'")


def test_an_installed_pyarrow_passes():
    pytest.importorskip("pyarrow")
    assert arrow_installed()
    require_arrow("the arrow engine")
