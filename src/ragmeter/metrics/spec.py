"""Metric definitions, their registry, and measure strings that round-trip.

A *spec* is a metric's definition (name, version, formula, source, parameters). A *measure*
is a spec with parameter values, a cut-off and a view; its canonical string is its identity:

>>> m = parse_measure("ndcg(discount='jk2002')@5")
>>> str(m), m.k, m.params["discount"]
("ndcg(discount='jk2002')@5", 5, 'jk2002')
>>> str(parse_measure(str(m))) == str(m)
True
>>> str(parse_measure("mrr@10"))        # aliases resolve to the canonical name
'reciprocal_rank@10'

Strings are parsed with ``ast`` (never ``eval``): only a name, keyword arguments with
literal values, and an optional ``@k`` are accepted.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from ragmeter.core.errors import InvalidParameterError

_MISSING = object()


@dataclass(frozen=True)
class Param:
    """A declared parameter: type, default, and the allowed values or lower bound."""

    type: type
    default: Any
    choices: tuple | None = None
    ge: float | None = None
    doc: str = ""

    def check(self, metric: str, name: str, value: Any) -> Any:
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, self.type) or (self.type is not bool and isinstance(value, bool)):
            raise InvalidParameterError(
                f"{metric}: parameter {name}={value!r} must be {self.type.__name__}"
                + (f", one of {self.choices}" if self.choices else ""))
        if self.choices is not None and value not in self.choices:
            raise InvalidParameterError(f"{metric}: parameter {name}={value!r} must be one of {self.choices}")
        if self.ge is not None and value < self.ge:
            raise InvalidParameterError(f"{metric}: parameter {name}={value!r} must be >= {self.ge}")
        return value


@dataclass(frozen=True)
class MetricSpec:
    """What a metric is. ``version`` goes up whenever a number it prints could change."""

    name: str
    version: int
    family: str
    definition: str
    source: str
    params: Mapping[str, Param] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    undefined: str | None = None
    higher_is_better: bool = True
    range: tuple[float, float] = (0.0, 1.0)
    label: str = ""  # column header in tables; "{k}" is replaced by the cut-off
    mean_label: str = ""  # how the mean is named in the summary line, e.g. "MRR"
    binary: bool = False  # per-sample values are 0 or 1
    rank_aware: bool = True
    accepts_k: bool = True
    needs: frozenset = frozenset()  # judged evidence the metric reads (claims/evidence.py); empty: labels only
    embedded: bool = False  # reads texts through an embedding model (compute(sample, measure, embedder))
    needs_fn: Callable[..., frozenset] | None = field(default=None, compare=False, repr=False)  # when params decide
    compute: Callable[..., Any] | None = field(default=None, compare=False, repr=False)

    @property
    def judged(self) -> bool:
        return bool(self.needs)


@dataclass(frozen=True)
class Measure:
    """A spec with parameter values, a cut-off ``k`` (``None``: the whole list) and a view."""

    spec: MetricSpec
    params: Mapping[str, Any]
    k: int | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def view(self) -> str:
        return self.params.get("view", "retrieved")

    @property
    def needs(self) -> frozenset:
        """The judged evidence this measure reads."""
        return self.spec.needs_fn(self) if self.spec.needs_fn else self.spec.needs

    @property
    def binary(self) -> bool:
        """Per-sample values are 0 or 1 (shown as integers in tables)."""
        return self.spec.binary and not self.params.get("granular", False)

    def non_default_params(self) -> dict[str, Any]:
        return {n: v for n, v in sorted(self.params.items()) if v != self.spec.params[n].default}

    def _variant_params(self) -> dict[str, Any]:
        """Non-default parameters other than the view (which tables show separately)."""
        return {n: v for n, v in self.non_default_params().items() if n != "view"}

    def __str__(self) -> str:
        args = ", ".join(f"{n}={v!r}" for n, v in self.non_default_params().items())
        text = f"{self.name}({args})" if args else self.name
        return f"{text}@{self.k}" if self.k is not None else text

    def with_k(self, k: int | None) -> "Measure":
        return Measure(self.spec, self.params, _check_k(self.spec, k))

    @property
    def label(self) -> str:
        """A short column header: the spec's label for default parameters, else the full string."""
        if self._variant_params() or not self.spec.label:
            return str(self)
        return _fill_k(self.spec.label, self.k)

    @property
    def mean_label(self) -> str:
        if self._variant_params() or not self.spec.mean_label:
            return str(self)
        return _fill_k(self.spec.mean_label, self.k)


def _fill_k(template: str, k: int | None) -> str:
    """``"P@{k}"`` -> ``"P@5"``, or ``"P"`` when there is no cut-off."""
    return template.replace("@{k}", "").replace("{k}", "") if k is None else template.replace("{k}", str(k))


REGISTRY: dict[str, MetricSpec] = {}
_ALIASES: dict[str, str] = {}


def register(spec: MetricSpec) -> MetricSpec:
    """Add a spec to the registry; names and aliases are unique, case-insensitively."""
    for key in (spec.name, *spec.aliases):
        low = key.lower()
        if low in _ALIASES and _ALIASES[low] != spec.name:
            raise ValueError(f"metric name {key!r} is already taken by {_ALIASES[low]!r}")
        _ALIASES[low] = spec.name
    REGISTRY[spec.name] = spec
    return spec


def get_spec(name: str) -> MetricSpec:
    try:
        return REGISTRY[_ALIASES[name.lower()]]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name.lower(), list(_ALIASES), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise InvalidParameterError(f"unknown metric {name!r}{hint} Known: {', '.join(sorted(REGISTRY))}") from None


def make_measure(name: str, k: int | None = None, **params: Any) -> Measure:
    """Build a measure from a name and keyword parameters, checking each against the spec."""
    spec = get_spec(name)
    resolved: dict[str, Any] = {}
    for pname, value in params.items():
        if pname not in spec.params:
            known = ", ".join(spec.params) or "none"
            raise InvalidParameterError(f"{spec.name}: unknown parameter {pname!r} (known: {known})")
        resolved[pname] = spec.params[pname].check(spec.name, pname, value)
    for pname, p in spec.params.items():
        resolved.setdefault(pname, p.default)
    return Measure(spec, MappingProxyType(resolved), _check_k(spec, k))


def _check_k(spec: MetricSpec, k: Any) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidParameterError(f"{spec.name}: k must be a positive integer, got {k!r}")
    if k < 1:
        raise InvalidParameterError(f"{spec.name}: k must be >= 1, got {k}")
    if not spec.accepts_k:
        raise InvalidParameterError(f"{spec.name} takes no cut-off @k")
    return k


_AT_K = re.compile(r"^(?P<body>.*?)@(?P<k>-?\d+)$")


def parse_measure(text: str) -> Measure:
    """Parse ``name``, ``name@k``, ``name(param=value, ...)@k`` into a checked ``Measure``."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameterError(f"a metric must be a non-empty string, got {text!r}")
    text = text.strip()
    k: int | None = None
    match = _AT_K.match(text)
    if match:
        text, k = match["body"].strip(), int(match["k"])
        if k < 1:
            raise InvalidParameterError(f"{text}: k must be >= 1, got {k}")
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise InvalidParameterError(f"cannot parse metric {text!r}; write e.g. ndcg@5 or ndcg(discount='jk2002')@5") from None
    if isinstance(node, ast.Name):
        return make_measure(node.id, k)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        params = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise InvalidParameterError(f"cannot parse metric {text!r}: no ** arguments")
            try:
                params[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                raise InvalidParameterError(f"{node.func.id}: parameter {kw.arg} must be a literal value") from None
        if "k" in params:
            if k is not None:
                raise InvalidParameterError(f"{text}: k given twice")
            k = params.pop("k")
        return make_measure(node.func.id, k, **params)
    raise InvalidParameterError(f"cannot parse metric {text!r}; write name, name@k or name(param=value)@k")
