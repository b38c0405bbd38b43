"""Pickling for frozen dataclasses that hold read-only mappings.

``types.MappingProxyType`` cannot be pickled, so a ``Sample``, a ``Measure`` or an ``AgentRun``
(whose mappings are proxies, to keep them read-only) would fail ``pickle.dumps`` (multiprocessing,
joblib, a notebook's cache). ``reduce_frozen`` pickles each proxy as a plain dict and
``rebuild_frozen`` wraps it back, so the copy equals the original, read-only mappings included.
"""

from __future__ import annotations

from dataclasses import fields
from types import MappingProxyType
from typing import Any


def reduce_frozen(obj: Any) -> tuple[Any, ...]:
    """``obj.__reduce__``: its field values in order, each read-only mapping as a plain dict."""
    values = [getattr(obj, f.name) for f in fields(obj)]
    proxied = tuple(i for i, v in enumerate(values) if isinstance(v, MappingProxyType))
    plain = tuple(dict(v) if i in proxied else v for i, v in enumerate(values))
    return rebuild_frozen, (type(obj), plain, proxied)


def rebuild_frozen(cls: type, values: tuple[Any, ...], proxied: tuple[int, ...]) -> Any:
    """The inverse of :func:`reduce_frozen`."""
    return cls(*(MappingProxyType(v) if i in proxied else v for i, v in enumerate(values)))
