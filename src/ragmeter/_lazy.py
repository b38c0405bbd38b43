"""Lazy package facades that name each public name once: in their ``if TYPE_CHECKING:`` imports.

A facade (``ragmeter``, ``ragmeter.records``, ``ragmeter.actions``, ``ragmeter.evidence``, ``ragmeter.io``,
``ragmeter.report``, ``ragmeter.runs``) ends with::

    __getattr__, __dir__, __all__ = lazy_facade(__name__)

    if TYPE_CHECKING:  # the public names, each imported from its home on first use
        from ragmeter.records.facts import Fact, FactCheck

Type checkers and IDEs read the imports; at run time :func:`lazy_facade` reads the same block
from the module's source (tokenized, not executed) and imports a name's home module only when the
name is first asked for (PEP 562), so importing the package stays light. This is the Scientific
Python ecosystem's SPEC 1 (lazy loading, ``lazy_loader.attach_stub``) without a stub file.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import sys
import tokenize
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
    return type_checking_imports(source)


def type_checking_imports(source: str) -> dict[str, tuple[str, str]]:
    r"""``name -> (module, name there)`` for each ``from MODULE import a, b as c`` directly inside
    a module-level ``if TYPE_CHECKING:`` block (relative imports left out).

    Read with :mod:`tokenize`, not :mod:`ast`: CPython 3.11 before 3.11.9 keeps the AST
    converter's depth in interpreter-wide state, so an ``ast.parse`` racing one in another
    thread (pytest rewriting a test module, a metric name parsed) can raise ``SystemError: AST
    constructor recursion depth mismatch`` (python/cpython#106905), and a facade may be imported
    first in a worker thread.

    >>> type_checking_imports("if TYPE_CHECKING:\n    from a.b import (C,\n        D as E)\n    from .x import F\n")
    {'C': ('a.b', 'C'), 'E': ('a.b', 'D')}
    """
    homes: dict[str, tuple[str, str]] = {}
    depth, block = 0, False
    words: list[str] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.INDENT:
            depth += 1
        elif token.type == tokenize.DEDENT:
            depth -= 1
            block = block and depth > 0
        elif token.type == tokenize.NEWLINE:
            statement, words = words, []
            if depth == 0:
                block = statement == ["if", "TYPE_CHECKING", ":"]
            elif block and depth == 1 and statement[:1] == ["from"] and "import" in statement:
                at = statement.index("import")
                module = "".join(statement[1:at])
                if module.startswith("."):
                    continue
                for part in " ".join(w for w in statement[at + 1:] if w not in "()").split(","):
                    bits = part.split()
                    if bits:
                        homes[bits[2] if len(bits) == 3 and bits[1] == "as" else bits[0]] = (module, bits[0])
        elif token.type in (tokenize.NAME, tokenize.OP):
            words.append(token.string)
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
