"""The table of registered metric specs, and :func:`register`: the leaf module every metric
family imports. :mod:`ragmeter.metrics.registry` imports the families (as names are looked up)
and sets :attr:`SpecTable.load_all`, so that reading the table as a whole holds every family."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ragmeter.metrics.kinds import AnySpec


class SpecTable(dict[str, Any]):
    """name -> spec; read as a whole (iteration, ``len``, ``in``, ``[name]``) it holds every family."""

    load_all: Callable[[], None] = staticmethod(lambda: None)  # set by ragmeter.metrics.registry

    def __getitem__(self, key: str) -> Any:
        self.load_all()
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[str]:
        self.load_all()
        return super().__iter__()

    def __len__(self) -> int:
        self.load_all()
        return super().__len__()

    def __contains__(self, key: object) -> bool:
        self.load_all()
        return super().__contains__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.load_all()
        return super().get(key, default)

    def keys(self) -> Any:
        self.load_all()
        return super().keys()

    def values(self) -> Any:
        self.load_all()
        return super().values()

    def items(self) -> Any:
        self.load_all()
        return super().items()


REGISTRY: SpecTable = SpecTable()
NAMES: dict[str, str] = {}  # lower-case name or alias -> canonical name


def register(spec: AnySpec) -> AnySpec:
    """Add a spec to the registry; names and aliases are unique, case-insensitively."""
    for key in (spec.name, *spec.aliases):
        low = key.lower()
        if low in NAMES and NAMES[low] != spec.name:
            raise ValueError(f"metric name {key!r} is already taken by {NAMES[low]!r}")
        NAMES[low] = spec.name
    dict.__setitem__(REGISTRY, spec.name, spec)
    return spec


