"""What a measure is, as data: a metric's definition, its parameters, and a canonical name that
is its identity.

A *spec* (:class:`MetricSpec`) defines a metric: name, version, formula, source, declared
parameters. A :class:`Measure` is a spec with parameter values, a cut-off ``k`` and (as a
parameter) a view. Its canonical string is its identity: ``repr(m) == str(m)``, equal
measures hash alike, and ``ragmeter.parse_measure(repr(m)) == m``.

How a spec is *computed* (label kernels, judged evidence, embeddings) is declared one layer
up, in ``ragmeter.metrics.kinds``; the registry of names and the parser that reads a name
through it live in ``ragmeter.metrics.registry``. This module needs neither: it parses the
syntax of a measure string, and resolves a name against the measures a result holds
(:func:`resolve_measure`), which carry their own specs, aliases and defaults.

>>> spec = MetricSpec(name="demo", version=1, family="retrieval", definition="d", source="s",
...                   aliases=("dm",), params={"gain": Param(str, "linear", choices=("linear", "exp"))})
>>> m = build_measure(spec, 5, {"gain": "exp"})
>>> m, m.k, m.params["gain"]
(demo(gain='exp')@5, 5, 'exp')
>>> held = [m, build_measure(spec, 10, {})]
>>> resolve_measure("dm(gain='exp')", held)   # an alias, and the one cut-off held
demo(gain='exp')@5
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar, cast

from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.frozen import reduce_frozen


@dataclass(frozen=True)
class Param:
    """A declared parameter: type, default, and the allowed values or lower bound."""

    type: type
    default: Any
    choices: tuple[Any, ...] | None = None
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
        if self.ge is not None and cast(float, value) < self.ge:  # a number: its type was checked above
            raise InvalidParameterError(f"{metric}: parameter {name}={value!r} must be >= {self.ge}")
        return value


@dataclass(frozen=True)
class Display:
    """How tables name a metric; not part of its identity. ``"{k}"`` is replaced by the cut-off
    (``"P@{k}"`` -> ``"P@5"``, or ``"P"`` without one)."""

    column: str = ""  # the per-sample column header
    mean: str = ""  # how the mean is named in the summary line, e.g. "MRR"


@dataclass(frozen=True, kw_only=True)
class MetricSpec:
    """What a metric is. ``version`` goes up whenever a number it prints could change.

    - ``undefined``: when a sample gets NotComputed, in words;
    - ``binary``: per-sample values are 0 or 1; ``rank_aware``: the order of the list counts;
    - ``accepts_k``: the metric takes a cut-off ``@k``.
    """

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
    binary: bool = False
    rank_aware: bool = True
    accepts_k: bool = True
    display: Display = Display()
    origin: str | None = None  # who defined a metric that is not built in (ragmeter.metrics.custom)

    def answers_to(self, name: str) -> bool:
        """``name`` is this metric's name or one of its aliases (case-insensitive)."""
        low = name.lower()
        return low == self.name.lower() or low in (a.lower() for a in self.aliases)


@dataclass(frozen=True, eq=False)
class Measure:
    """A spec with parameter values (every declared parameter, defaults filled in), a cut-off
    ``k`` (``None``: the whole list) and, as the ``view`` parameter, the list it ranks.

    Equality and hashing follow the canonical name, and ``repr`` is that name."""

    spec: MetricSpec
    params: Mapping[str, Any]
    k: int | None = None

    __reduce__ = reduce_frozen  # params (read-only) pickles as a dict

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def view(self) -> str:
        view = self.params.get("view", "retrieved")
        return str(view)

    @property
    def binary(self) -> bool:
        """Per-sample values are 0 or 1 (shown as integers in tables)."""
        return self.spec.binary and not self.params.get("granular", False)

    def non_default_params(self) -> dict[str, Any]:
        return {n: v for n, v in sorted(self.params.items()) if v != self.spec.params[n].default}

    def identity(self) -> tuple[str, tuple[tuple[str, Any], ...], int | None]:
        """(metric name, every parameter value, k): what equality and hashing compare."""
        return self.spec.name, tuple(sorted(self.params.items())), self.k

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and self.identity() == other.identity()

    def __hash__(self) -> int:
        return hash(self.identity())

    def __str__(self) -> str:
        args = ", ".join(f"{n}={v!r}" for n, v in self.non_default_params().items())
        text = f"{self.name}({args})" if args else self.name
        return f"{text}@{self.k}" if self.k is not None else text

    __repr__ = __str__

    def _repr_html_(self) -> str:
        from ragmeter.core.notebook_html import table_html  # notebooks only

        spec = self.spec
        rows = [("definition", spec.definition), ("source", spec.source),
                ("better", "higher" if spec.higher_is_better else "lower"),
                *((f"param {n}", repr(v)) for n, v in sorted(self.params.items()))]
        return table_html(str(self), ("", ""), rows, max_rows=len(rows))

    def with_k(self, k: int | None) -> Measure:
        return Measure(self.spec, self.params, check_k(self.spec, k))

    def _variant_params(self) -> dict[str, Any]:
        """Non-default parameters other than the view (which tables show separately)."""
        return {n: v for n, v in self.non_default_params().items() if n != "view"}

    @property
    def label(self) -> str:
        """A short column header: the spec's for default parameters, else the full string."""
        if self._variant_params() or not self.spec.display.column:
            return str(self)
        return _fill_k(self.spec.display.column, self.k)

    @property
    def mean_label(self) -> str:
        """How the summary line names the mean: the spec's for default parameters, else the full string."""
        if self._variant_params() or not self.spec.display.mean:
            return str(self)
        return _fill_k(self.spec.display.mean, self.k)


def _fill_k(template: str, k: int | None) -> str:
    """``"P@{k}"`` -> ``"P@5"``, or ``"P"`` when there is no cut-off."""
    return template.replace("@{k}", "").replace("{k}", "") if k is None else template.replace("{k}", str(k))


def check_k(spec: MetricSpec, k: Any) -> int | None:
    """``k`` as a cut-off for ``spec``: ``None`` (the whole list) or a positive integer."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidParameterError(f"{spec.name}: k must be a positive integer, got {k!r}")
    if k < 1:
        raise InvalidParameterError(f"{spec.name}: k must be >= 1, got {k} (k=None scores the whole list)")
    if not spec.accepts_k:
        raise InvalidParameterError(f"{spec.name} takes no cut-off @k")
    return k


def build_measure(spec: MetricSpec, k: int | None, params: Mapping[str, Any]) -> Measure:
    """A measure of ``spec``: each parameter checked against its declaration, defaults filled in."""
    resolved: dict[str, Any] = {}
    for pname, value in params.items():
        if pname not in spec.params:
            known = ", ".join(spec.params) or "none"
            raise InvalidParameterError(f"{spec.name}: unknown parameter {pname!r} (known: {known})")
        resolved[pname] = spec.params[pname].check(spec.name, pname, value)
    for pname, p in spec.params.items():
        resolved.setdefault(pname, p.default)
    return Measure(spec, MappingProxyType(resolved), check_k(spec, k))


@dataclass(frozen=True)
class MeasureText:
    """A measure string taken apart: the name as written, the parameters written, the cut-off."""

    name: str
    params: Mapping[str, Any]
    k: int | None


_AT_K = re.compile(r"^(?P<body>.*?)@(?P<k>-?\d+)$")
_NAMED = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_\-]*)\s*(?:\((?P<args>.*)\))?$", re.DOTALL)
EXAMPLE = "write e.g. ndcg@5 or ndcg(discount='jk2002')@5"


def split_measure_list(text: str) -> list[str]:
    """``"ndcg(discount='jk2002', base=2.0)@5, mrr"`` -> the measure strings it lists: split at
    commas outside parentheses.

    >>> split_measure_list("ndcg(discount='jk2002', base=2.0)@5,mrr")
    ["ndcg(discount='jk2002', base=2.0)@5", 'mrr']
    """
    out: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [m.strip() for m in out if m.strip()]


def split_measure_text(text: str) -> MeasureText:
    """``name``, ``name@k`` or ``name(param=value, ...)@k`` taken apart, with ``ast`` (never
    ``eval``): only a name (letters, digits, ``_``, ``-``), keyword arguments with literal
    values, and an optional ``@k`` are accepted.

    >>> split_measure_text("r-precision@10")
    MeasureText(name='r-precision', params={}, k=10)
    >>> split_measure_text("ndcg(discount='jk2002', base=3)").params
    {'discount': 'jk2002', 'base': 3}
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameterError(f"a metric must be a non-empty string, got {text!r}")
    text = text.strip()
    k: int | None = None
    match = _AT_K.match(text)
    if match:
        text, k = match["body"].strip(), int(match["k"])
        if k < 1:
            raise InvalidParameterError(f"{text}: k must be >= 1, got {k} (without @k a measure is cut at the run's k, "
                                        f"5 by default; for the whole list give --k 0, or k=None in Python)")
    named = _NAMED.match(text)
    if named is None:
        raise InvalidParameterError(f"cannot parse metric {text!r}; {EXAMPLE}")
    params: dict[str, Any] = {}
    if named["args"] is not None and named["args"].strip():
        try:
            node = ast.parse(f"f({named['args']})", mode="eval").body
        except SyntaxError:
            raise InvalidParameterError(f"cannot parse metric {text!r}; {EXAMPLE}") from None
        if not isinstance(node, ast.Call) or node.args:
            raise InvalidParameterError(f"cannot parse metric {text!r}; write name, name@k or name(param=value)@k")
        for kw in node.keywords:
            if kw.arg is None:
                raise InvalidParameterError(f"cannot parse metric {text!r}: no ** arguments")
            try:
                params[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                raise InvalidParameterError(f"{named['name']}: parameter {kw.arg} must be a literal value") from None
    if "k" in params:
        if k is not None:
            raise InvalidParameterError(f"{text}: k given twice")
        k = params.pop("k")
    return MeasureText(named["name"], params, k)


class MeasureNotFound(InvalidParameterError, KeyError):
    """A name that does not pick exactly one of the measures a result or run holds."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def resolve_measure(key: str | Measure, measures: Iterable[Measure], *, holder: str = "the result") -> Measure:
    """The one measure of ``measures`` that ``key`` names.

    ``key`` is a measure or a string read as :func:`split_measure_text` reads it, with any
    alias of the metric's name. What it leaves out resolves as follows:

    - parameters not written take their defaults (the view included: ``ndcg`` is
      ``ndcg(view='retrieved')``);
    - no ``@k``: the measure without a cut-off when it is held; otherwise the one cut-off
      held (``mrr`` finds ``reciprocal_rank@5``). When several are held (``@5`` and ``@10``),
      the name is ambiguous and the error lists them.

    Raises :class:`MeasureNotFound` (an ``InvalidParameterError`` and a ``KeyError``) naming
    what ``holder`` holds.
    """
    pool = list(measures)
    if isinstance(key, Measure):
        wanted, written = key, str(key)
    else:
        if not isinstance(key, str):
            raise MeasureNotFound(f"a measure is named by a string or a Measure, got {key!r}")
        written = key.strip()
        for m in pool:
            if str(m) == written:
                return m
        parsed = split_measure_text(written)
        same_metric = [m for m in pool if m.spec.answers_to(parsed.name)]
        if not same_metric:
            raise MeasureNotFound(f"{holder} has no measure {written!r}; it holds: {_listing(pool)}")
        wanted = build_measure(same_metric[0].spec, parsed.k, parsed.params)
    for m in pool:
        if m == wanted:
            return m
    if wanted.k is None and wanted.spec.accepts_k:
        cut = [m for m in pool if m.spec.name == wanted.spec.name and dict(m.params) == dict(wanted.params)]
        if len(cut) == 1:
            return cut[0]
        if len(cut) > 1:
            raise MeasureNotFound(f"{written!r} is ambiguous: {holder} holds it at several cut-offs "
                                  f"({_listing(cut)}); name one of them")
    same = [m for m in pool if m.spec.name == wanted.spec.name]
    raise MeasureNotFound(f"{holder} has no measure {written!r} ({wanted}); it holds: {_listing(same or pool)}")


def _listing(measures: Iterable[Measure]) -> str:
    return ", ".join(str(m) for m in measures) or "no measures"


V = TypeVar("V", covariant=True)


class MeasureMap(Mapping[Measure, V]):
    """A read-only mapping keyed by :class:`Measure`, in the measures' order, whose look-ups
    also take a string and resolve it as :func:`resolve_measure` does (aliases, default k)."""

    def __init__(self, items: Mapping[Measure, V] | Iterable[tuple[Measure, V]], *, holder: str = "the result"
                 ) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        self._data: dict[Measure, V] = dict(pairs)
        self._holder = holder

    def resolve(self, key: str | Measure) -> Measure:
        """The measure held under ``key``."""
        return resolve_measure(key, self._data, holder=self._holder)

    def __getitem__(self, key: str | Measure) -> V:
        if isinstance(key, Measure) and key in self._data:  # held as is: what resolve would find first
            return self._data[key]
        return self._data[self.resolve(key)]

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, (str, Measure)):
            return False
        try:
            self.resolve(key)
        except InvalidParameterError:  # not held, ambiguous, or not a measure name at all
            return False
        return True

    def __iter__(self) -> Iterator[Measure]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"MeasureMap({self._data!r})"
