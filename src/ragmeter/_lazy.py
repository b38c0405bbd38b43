"""Lazy package facades that name each public name once: in their ``if TYPE_CHECKING:`` imports.

A facade (``ragmeter``, ``ragmeter.records``, ``ragmeter.actions``) ends with::

    __getattr__, __dir__, __all__ = lazy_facade(__name__)

    if TYPE_CHECKING:  # the public names, each imported from its home on first use
        from ragmeter.records.facts import Fact, FactCheck

Type checkers and IDEs read the imports; at run time :func:`lazy_facade` reads the same block
from the module's source (``ast``, no execution) and imports a name's home module only when the
name is first asked for (PEP 562), so importing the package stays light. This is the Scientific
Python ecosystem's SPEC 1 (lazy loading, ``lazy_loader.attach_stub``) without a stub file.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _homes(module: str) -> dict[str, tuple[str, str]]:
    """Public name -> (its home module, its name there), from the ``if TYPE_CHECKING:`` block."""
    spec = importlib.util.find_spec(module)
    origin = spec.origin if spec is not None else None
    source = None
    if origin and origin.endswith(".py"):
        source = Path(origin).read_text(encoding="utf-8")
    elif spec is not None:  # a zip import, say
        get_source = getattr(spec.loader, "get_source", None)
        source = get_source(module) if get_source is not None else None
    if source is None:
        raise ImportError(f"{module} reads its public names from its source, which is not installed")
    homes: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
                    for alias in statement.names:
                        homes[alias.asname or alias.name] = (statement.module, alias.name)
    return homes


def lazy_facade(module: str, *extra: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for the facade ``module``; ``extra``: names
    the module defines itself, listed in ``__all__`` too."""
    homes = _homes(module)
    public = [*extra, *homes]

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home[0]), home[1])
        setattr(sys.modules[module], name, value)  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[module])) | set(public))

    return __getattr__, __dir__, public
