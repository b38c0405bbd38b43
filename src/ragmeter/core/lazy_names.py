"""A package's public names imported on first use (PEP 562), so importing one of its modules
loads that module alone (start-up time: ``ragmeter --help`` and a label-only ``eval``).

>>> getattr_, dir_ = lazy_names("ragmeter.core", {"Sample": "ragmeter.core.sample"}, {})
>>> getattr_("Sample").__name__
'Sample'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, homes: Mapping[str, str], namespace: dict[str, Any]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: each name in ``homes`` imported from its
    module when first read, then kept in ``namespace`` (the package's globals)."""

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(homes))

    return getattr_, dir_
