"""The metric registry, and measure strings that round-trip through it.

Every metric family registers its specs when it is imported (:data:`FAMILIES`: as names are
looked up), in :mod:`ragmeter.metrics.spec_table` (the leaf the families import, so that this
module can import them). A measure's canonical string is its identity; it parses back to an equal measure:

>>> from ragmeter.metrics import parse_measure
>>> m = parse_measure("ndcg(discount='jk2002')@5")
>>> m, m.k, m.params["discount"]
(ndcg(discount='jk2002')@5, 5, 'jk2002')
>>> parse_measure(repr(m)) == m and hash(parse_measure(repr(m))) == hash(m)
True
>>> parse_measure("mrr@10")        # aliases resolve to the canonical name
reciprocal_rank@10
>>> parse_measure("r-precision")   # a hyphen is part of a name
r_precision

Strings are parsed with ``ast`` (never ``eval``): only a name, keyword arguments with
literal values, and an optional ``@k`` are accepted (:func:`ragmeter.core.measure.split_measure_text`).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable
from typing import Any

from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.measure import Measure, build_measure, resolve_measure, split_measure_text
from ragmeter.metrics.kinds import AnySpec
from ragmeter.metrics.spec_table import NAMES, REGISTRY, register

__all__ = ["ENTRY_POINTS", "FAMILIES", "REGISTRY", "get_spec", "load_all", "make_measure",
           "parse_measure", "register", "resolve_key"]

#: The metric families, each a package that registers its specs when imported; the label metrics
#: first. A family is imported when a name is looked up that the ones before it do not hold, or
#: when the registry is read as a whole (so a label-only run loads no judged metric's code).
FAMILIES = ("retrieval", "context", "conversation", "generation", "beyond")
#: After them, the metrics installed packages offer (:mod:`ragmeter.metrics.custom`).
ENTRY_POINTS = "ragmeter.metrics"
_loaded: list[str] = []


def _load_next() -> bool:
    """Import the next family not imported yet, then the installed packages' metrics (False: all are)."""
    for family in FAMILIES:
        if family not in _loaded:
            _loaded.append(family)
            importlib.import_module(f"ragmeter.metrics.{family}")
            return True
    if ENTRY_POINTS not in _loaded:
        _loaded.append(ENTRY_POINTS)
        load_entry_points()
        return True
    return False


def load_all() -> None:
    """Register every family, then the installed packages' metrics."""
    while _load_next():
        pass


def load_entry_points() -> list[str]:
    """Import every entry point of the ``ragmeter.metrics`` group, each stamped with its
    distribution's name and version; one that fails to load is skipped with a
    :class:`~ragmeter.core.errors.RagmeterWarning` naming it and the error. Returns what each
    loaded (``"name = value"``)."""
    import warnings
    from importlib.metadata import entry_points

    from ragmeter.core.errors import RagmeterWarning
    from ragmeter.metrics.custom import origin_of, register_entry

    done = []
    for ep in entry_points(group=ENTRY_POINTS):
        dist = getattr(ep, "dist", None)
        origin = f"{dist.name} {dist.version}" if dist is not None else ep.value
        try:
            with origin_of(origin):
                register_entry(ep.load(), origin)
        except Exception as exc:  # noqa: BLE001 -- a broken plugin must not stop a run that does not use it
            warnings.warn(f"the metrics of {origin} (entry point {ep.name} = {ep.value} in {ENTRY_POINTS}) did not "
                          f"load: {type(exc).__name__}: {exc}", RagmeterWarning, stacklevel=2)
            continue
        done.append(f"{ep.name} = {ep.value}")
    return done


REGISTRY.load_all = load_all  # reading the table as a whole imports every family first


def get_spec(name: str) -> AnySpec:
    """The registered spec of ``name`` or one of its aliases (case-insensitive)."""
    low = name.lower()
    while low not in NAMES and _load_next():  # the families in turn, until one holds it
        pass
    canonical = NAMES.get(low)
    if canonical is not None:
        spec: AnySpec = dict.__getitem__(REGISTRY, canonical)
        return spec
    close = difflib.get_close_matches(low, list(NAMES), n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise InvalidParameterError(f"unknown metric {name!r}{hint} Known: {', '.join(sorted(REGISTRY))}") from None


def make_measure(name: str, k: int | None = None, **params: Any) -> Measure:
    """Build a measure from a name and keyword parameters, checking each against the spec."""
    return build_measure(get_spec(name), k, params)


def parse_measure(text: str) -> Measure:
    """Parse ``name``, ``name@k``, ``name(param=value, ...)@k`` into a checked ``Measure``."""
    parsed = split_measure_text(text)
    return build_measure(get_spec(parsed.name), parsed.k, parsed.params)


def resolve_key(key: str | Measure, keys: Iterable[str], *, holder: str = "the run") -> str:
    """Which of ``keys`` (the measure names a saved run is keyed by) ``key`` names: the key
    itself, or the one it resolves to through the parser (aliases, default parameters, the one
    cut-off held; see :func:`ragmeter.core.measure.resolve_measure`).

    >>> resolve_key("mrr", ["ndcg@5", "reciprocal_rank@5"])
    'reciprocal_rank@5'
    """
    keys = list(keys)
    if isinstance(key, str) and key.strip() in keys:
        return key.strip()
    by_measure: dict[Measure, str] = {}
    for name in keys:
        try:
            by_measure[parse_measure(name)] = name
        except InvalidParameterError:  # a metric this version does not know: reachable by its exact key only
            continue
    return by_measure[resolve_measure(key, by_measure, holder=holder)]
