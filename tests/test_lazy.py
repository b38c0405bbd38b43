"""The lazy facades name each public name once (their TYPE_CHECKING imports), and load a name's
home only when it is used."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import ragmeter
from ragmeter._lazy import _homes

FACADES = ("ragmeter", "ragmeter.records", "ragmeter.actions")


@pytest.mark.parametrize("name", FACADES)
def test_every_listed_name_is_its_homes_object(name):
    facade = importlib.import_module(name)
    homes = _homes(name)
    assert set(facade.__all__) - {"__version__"} == set(homes) and homes
    for public, (module, attribute) in homes.items():
        assert getattr(facade, public) is getattr(importlib.import_module(module), attribute), public
    assert set(facade.__all__) <= set(dir(facade))
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        facade.nope  # noqa: B018


def test_importing_a_facade_loads_no_home_until_a_name_is_used():
    code = ("import sys, ragmeter.records as r\n"
            "before = sorted(m for m in sys.modules if m.startswith('ragmeter.records.'))\n"
            "r.Fact\n"
            "print(before, 'ragmeter.records.facts' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[] True"


def test_the_top_facade_keeps_its_version():
    assert "__version__" in ragmeter.__all__ and ragmeter.__version__
