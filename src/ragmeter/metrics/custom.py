"""Metrics of one's own, defined in a notebook or a package: scored, reported, provenance-stamped
and compared like a built-in one.

Three decorators, one per kind of metric; each turns a plain function into a registered spec
(definition, source, range, direction) and returns the function unchanged, with the spec as its
``metric_spec`` attribute:

- :func:`label_metric`: ``fn(grades, labels, **params) -> float | None`` per sample; ``grades``
  holds the relevance grade of the chunk at each rank 1..k (NaN: unlabeled), ``labels`` every
  labeled chunk's grade, highest first. ``k`` and ``--view`` work as for the built-in ones.
- :func:`embedding_metric`: ``fn(sample, embedder, **params) -> float | None``;
  ``embedder.encode(texts)`` gives unit vectors (the bundled MiniLM unless the run names another).
- :func:`judged_metric`: ``fn(evidence, sample, **params) -> float | None`` over the judged
  evidence it names (``evidence={"answer_claims", "answer@context"}``: the claims and their
  verdicts, :mod:`ragmeter.evidence.matrix`); the planner asks the judge for it, once, shared
  with every other metric that reads it.

``None`` (or raising :class:`~ragmeter.metrics.Unscorable` with a reason) makes the sample
NotComputed with the metric's ``undefined`` text; a value that is not a finite number inside
``range`` raises :class:`CustomMetricError` naming the metric and the sample. A package offers
its metrics through the entry-point group ``ragmeter.metrics`` (``name = "module"`` or
``"module:attr"``): the registry imports them after the built-in families, when a name is not
found among them or the whole registry is read, and stamps each with the distribution's name and
version (``metric_origin`` in every score's provenance). A custom metric may not take a built-in
one's name or alias; defining it again from the same place (a notebook cell run twice) replaces it.

>>> import numpy as np
>>> @label_metric(definition="1 if the chunk at rank 1 is relevant, else 0", source="a notebook",
...               binary=True, accepts_k=False)
... def first_hit_demo(grades, labels):
...     return None if not (labels > 0).any() else float(len(grades) > 0 and grades[0] > 0)
>>> from ragmeter.metrics import parse_measure
>>> m = parse_measure("first_hit_demo")
>>> from ragmeter.metrics.batch import RankedBatch
>>> batch = RankedBatch.from_lists([["r1", "x"], ["x", "r2"], ["x"]], [{"r1": 1}, {"r2": 1}, {}])
>>> out = m.spec.compute(batch, m)
>>> out.values.tolist(), out.undefined.tolist()
([1.0, 0.0, 0.0], [False, False, True])
>>> unregister("first_hit_demo")
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ragmeter.core.errors import InvalidParameterError, RagmeterError
from ragmeter.core.measure import Display, Measure, MetricSpec, Param
from ragmeter.metrics.batch import Computed, RankedBatch
from ragmeter.metrics.kinds import EmbeddingSpec, JudgedContext, JudgedSpec, LabelSpec, Unscorable
from ragmeter.metrics.retrieval.common import VIEW
from ragmeter.metrics.spec_table import NAMES, REGISTRY, register

if TYPE_CHECKING:
    from ragmeter.core.sample import Sample
    from ragmeter.embeddings.base import Embedder
    from ragmeter.evidence.matrix import Evidence

F = TypeVar("F", bound=Callable[..., Any])
#: the distribution whose entry point is being loaded (set by the registry while it imports one)
LOADING: ContextVar[str | None] = ContextVar("ragmeter_metric_origin", default=None)


class CustomMetricError(RagmeterError):
    """A metric of one's own returned what is not a score (not a number, NaN, outside its range),
    or could not be defined (a name taken, an unknown kind of evidence)."""


@contextmanager
def origin_of(distribution: str):
    """While a package's entry point is imported, the metrics it defines are stamped with it."""
    token = LOADING.set(distribution)
    try:
        yield
    finally:
        LOADING.reset(token)


def _origin(fn: Callable[..., Any]) -> str:
    where = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
    package = LOADING.get()
    return f"{package} ({where})" if package else where


def _checked(spec: MetricSpec, value: Any, sample: str) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise CustomMetricError(f"metric {spec.name!r} ({spec.origin}) returned {value!r} for sample {sample}: "
                                f"return a number, or None when the sample cannot be scored") from None
    low, high = spec.range
    if not math.isfinite(number) or not low <= number <= high:
        raise CustomMetricError(f"metric {spec.name!r} ({spec.origin}) returned {number!r} for sample {sample}, "
                                f"outside its range [{low}, {high}]: return a finite number in the range, or None "
                                f"when the sample cannot be scored")
    return number


def register_metric(spec: MetricSpec) -> MetricSpec:
    """Add a metric of one's own to the registry (what the decorators do; call it with a
    :class:`~ragmeter.metrics.LabelSpec`, ``JudgedSpec`` or ``EmbeddingSpec`` built by hand for a
    vectorized label kernel). Refuses a built-in metric's name or alias, and another origin's."""
    if not isinstance(spec, (LabelSpec, JudgedSpec, EmbeddingSpec)):
        raise CustomMetricError(f"register_metric takes a LabelSpec, JudgedSpec or EmbeddingSpec, "
                                f"got {type(spec).__name__}")
    if spec.origin is None:
        spec = replace(spec, origin=LOADING.get() or "registered in process")
    REGISTRY.load_all()  # a name is checked against every built-in and installed metric's (set by the registry)
    for key in (spec.name, *spec.aliases):
        taken = NAMES.get(key.lower())
        if taken is None:
            continue
        holder = dict.get(REGISTRY, taken)
        if holder is None or holder.origin is None:
            raise CustomMetricError(f"metric name {key!r} is taken by the built-in metric {taken!r}: "
                                    f"name yours otherwise")
        if holder.origin != spec.origin:
            raise CustomMetricError(f"metric name {key!r} is taken by {taken!r} from {holder.origin}")
        unregister(taken)  # the same origin defines it again: replaced
    register(spec)
    return spec


def unregister(name: str) -> None:
    """Remove a metric of one's own (a built-in one stays)."""
    spec = dict.get(REGISTRY, name)
    if spec is None or spec.origin is None:
        return
    for key in (spec.name, *spec.aliases):
        NAMES.pop(key.lower(), None)
    dict.pop(REGISTRY, name)


def _params(params: Mapping[str, Param] | None) -> dict[str, Param]:
    out = dict(params or {})
    for name, p in out.items():
        if not isinstance(p, Param):
            raise CustomMetricError(f"parameter {name!r} must be a ragmeter.metrics.Param(type, default, ...), "
                                    f"got {type(p).__name__}")
    return out


def _user_params(measure: Measure, declared: Iterable[str]) -> dict[str, Any]:
    return {n: measure.params[n] for n in declared}


def _common(fn: Callable[..., Any], name: str | None, definition: str, source: str, version: int,
            value_range: tuple[float, float], higher_is_better: bool, undefined: str | None, aliases: Iterable[str],
            display: str | None) -> dict[str, Any]:
    if not definition.strip() or not source.strip():
        raise CustomMetricError(f"metric {name or fn.__name__!r}: give its definition (the formula, in words) and "
                                f"its source (a paper, a team, a ticket)")
    low, high = (float(value_range[0]), float(value_range[1]))
    if not low < high:
        raise CustomMetricError(f"metric {name or fn.__name__!r}: range must be (low, high) with low < high")
    label = display or name or fn.__name__
    return {"name": name or fn.__name__, "version": version, "definition": definition, "source": source,
            "range": (low, high), "higher_is_better": higher_is_better, "aliases": tuple(aliases),
            "undefined": undefined or "the metric returned None", "display": Display(label, label),
            "origin": _origin(fn)}


def label_metric(name: str | None = None, *, definition: str, source: str, version: int = 1,
                 range: tuple[float, float] = (0.0, 1.0), higher_is_better: bool = True,
                 undefined: str | None = None, params: Mapping[str, Param] | None = None,
                 accepts_k: bool = True, rank_aware: bool = True, binary: bool = False,
                 aliases: Iterable[str] = (), display: str | None = None, family: str = "custom") -> Callable[[F], F]:
    """Register ``fn(grades, labels, **params) -> float | None`` as a label metric (see the module)."""

    def wrap(fn: F) -> F:
        declared = _params(params)
        common = _common(fn, name, definition, source, version, range, higher_is_better, undefined, aliases, display)
        holder: list[MetricSpec] = []

        def compute(batch: RankedBatch, measure: Measure) -> Computed:
            cut = batch.cut(measure.k)
            values, undefined_rows = np.zeros(batch.n), np.zeros(batch.n, dtype=bool)
            kwargs = _user_params(measure, declared)
            for i in builtins.range(batch.n):
                grades = cut[i, :min(int(batch.lengths[i]), cut.shape[1])]
                labels = batch.label_grades[i][np.isfinite(batch.label_grades[i])]
                value = _checked(holder[0], fn(grades.copy(), labels.copy(), **kwargs), f"#{i + 1}")
                values[i], undefined_rows[i] = (0.0, True) if value is None else (value, False)
            return Computed(values, undefined_rows, holder[0].undefined or "")

        spec = LabelSpec(**common, family=family, params={**declared, "view": VIEW}, accepts_k=accepts_k,
                         rank_aware=rank_aware, binary=binary, compute=compute)
        holder.append(register_metric(spec))
        fn.metric_spec = holder[0]  # type: ignore[attr-defined]
        return fn

    return wrap


def embedding_metric(name: str | None = None, *, definition: str, source: str, version: int = 1,
                     range: tuple[float, float] = (0.0, 1.0), higher_is_better: bool = True,
                     undefined: str | None = None, params: Mapping[str, Param] | None = None,
                     aliases: Iterable[str] = (), display: str | None = None) -> Callable[[F], F]:
    """Register ``fn(sample, embedder, **params) -> float | None`` as an embedding metric."""

    def wrap(fn: F) -> F:
        declared = _params(params)
        common = _common(fn, name, definition, source, version, range, higher_is_better, undefined, aliases, display)
        holder: list[MetricSpec] = []

        def compute(sample: Sample, measure: Measure, embedder: Embedder) -> float:
            value = _checked(holder[0], fn(sample, embedder, **_user_params(measure, declared)), repr(sample.id))
            if value is None:
                raise Unscorable(holder[0].undefined or "")
            return value

        holder.append(register_metric(EmbeddingSpec(**common, params=declared, compute=compute)))
        fn.metric_spec = holder[0]  # type: ignore[attr-defined]
        return fn

    return wrap


def judged_metric(name: str | None = None, *, evidence: Iterable[str], definition: str, source: str,
                  version: int = 1, range: tuple[float, float] = (0.0, 1.0),
                  higher_is_better: bool = True, undefined: str | None = None,
                  params: Mapping[str, Param] | None = None, aliases: Iterable[str] = (),
                  display: str | None = None, family: str = "custom") -> Callable[[F], F]:
    """Register ``fn(evidence, sample, **params) -> float | None`` as a metric over the judged
    ``evidence`` it names (the needs of :mod:`ragmeter.evidence.matrix`)."""
    from ragmeter.evidence.matrix import need_kind
    from ragmeter.evidence.provider import PROVIDERS

    needs = frozenset(evidence)
    unknown = sorted(n for n in needs if need_kind(n) not in PROVIDERS)
    if not needs or unknown:
        raise CustomMetricError(f"judged_metric needs evidence among {', '.join(sorted(PROVIDERS))}; "
                                f"got {', '.join(unknown) or 'none'}")

    def wrap(fn: F) -> F:
        declared = _params(params)
        common = _common(fn, name, definition, source, version, range, higher_is_better, undefined, aliases, display)
        holder: list[MetricSpec] = []

        def compute(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
            value = _checked(holder[0], fn(ev, sample, **_user_params(measure, declared)), repr(sample.id))
            if value is None:
                raise Unscorable(holder[0].undefined or "")
            return value

        spec = JudgedSpec(**common, family=family, params=declared, evidence=needs, compute=compute)
        holder.append(register_metric(spec))
        fn.metric_spec = holder[0]  # type: ignore[attr-defined]
        return fn

    return wrap


def register_entry(obj: Any, distribution: str) -> list[str]:
    """What an entry point of ``ragmeter.metrics`` loaded: a module (its decorators registered its
    metrics as it was imported), a spec, a decorated function, or a list of them. Returns the names
    registered from ``obj`` itself (none for a module)."""
    items = obj if isinstance(obj, (list, tuple)) else [obj]
    names = []
    for item in items:
        given = getattr(item, "metric_spec", item)
        if isinstance(given, MetricSpec):
            if dict.get(REGISTRY, given.name) is not given:
                register_metric(replace(given, origin=given.origin or distribution))
            names.append(given.name)
        elif not hasattr(item, "__file__") and not hasattr(item, "__path__"):  # a module needs nothing more
            raise InvalidParameterError(f"entry point of {distribution} in ragmeter.metrics gave a "
                                        f"{type(item).__name__}: point it at a module, a metric spec, a function "
                                        f"decorated with label_metric / embedding_metric / judged_metric, or a list")
    return names
