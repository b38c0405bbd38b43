"""The lazy facades name each public name once (their TYPE_CHECKING imports), and load a name's
home only when it is used."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import ragmeter
from ragmeter._lazy import _homes

FACADES = ("ragmeter", "ragmeter.records", "ragmeter.actions", "ragmeter.judges.local")


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


def test_the_facades_names_are_read_without_ast():
    """``ast.parse`` in a facade's import raced pytest's assertion rewriting (and any other
    thread's parse) on CPython 3.11.7: SystemError "AST constructor recursion depth mismatch"
    (python/cpython#106905) in a test run. The reader is tokenize-based; it gives what the
    ``ast`` reading gave on every module of the package."""
    import ast
    from pathlib import Path

    import ragmeter
    from ragmeter._lazy import type_checking_imports

    def by_ast(source: str) -> dict[str, tuple[str, str]]:
        homes = {}
        for node in ast.parse(source).body:
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                for statement in node.body:
                    if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
                        for alias in statement.names:
                            homes[alias.asname or alias.name] = (statement.module, alias.name)
        return homes

    sources = [p.read_text(encoding="utf-8") for p in Path(ragmeter.__file__).parent.rglob("*.py")]
    read = [(by_ast(s), type_checking_imports(s)) for s in sources if "TYPE_CHECKING" in s]
    assert len(read) > 20 and all(a == b for a, b in read)
    assert "import ast" not in Path(ragmeter._lazy.__file__).read_text()
