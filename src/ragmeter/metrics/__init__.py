"""The metric registry and every metric family. Each family registers its specs when a name
is looked up that the ones before it do not hold, or when ``REGISTRY`` is read as a whole
(:mod:`ragmeter.metrics.registry`): a label-only run, and ``ragmeter trec``, import the label
metrics only. Metrics of one's own: :mod:`ragmeter.metrics.custom` (``label_metric``,
``embedding_metric``, ``judged_metric``, the ``ragmeter.metrics`` entry-point group)."""

from ragmeter.core.measure import Display, Measure, MetricSpec, Param
from ragmeter.metrics.kinds import EmbeddingSpec, JudgedContext, JudgedSpec, LabelSpec, Unscorable
from ragmeter.metrics.registry import REGISTRY, get_spec, make_measure, parse_measure, resolve_key

__all__ = ["REGISTRY", "CustomMetricError", "Display", "EmbeddingSpec", "JudgedContext", "JudgedSpec", "LabelSpec",
           "Measure", "MetricSpec", "Param", "Unscorable", "embedding_metric", "get_spec", "judged_metric",
           "label_metric", "make_measure", "parse_measure", "register_metric", "resolve_key", "unregister"]

_CUSTOM = {"CustomMetricError", "embedding_metric", "judged_metric", "label_metric", "register_metric", "unregister"}


def __getattr__(name: str):  # metrics of one's own (ragmeter.metrics.custom), imported on first use
    if name in _CUSTOM:
        from ragmeter.metrics import custom

        return getattr(custom, name)
    raise AttributeError(f"module 'ragmeter.metrics' has no attribute {name!r}")
