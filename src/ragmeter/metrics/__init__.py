"""The metric registry and every metric family. Each family registers its specs when a name
is looked up that the ones before it do not hold, or when ``REGISTRY`` is read as a whole
(:mod:`ragmeter.metrics.registry`): a label-only run, and ``ragmeter trec``, import the label
metrics only."""

from ragmeter.core.measure import Display, Measure, MetricSpec, Param
from ragmeter.metrics.kinds import EmbeddingSpec, JudgedContext, JudgedSpec, LabelSpec, Unscorable
from ragmeter.metrics.registry import REGISTRY, get_spec, make_measure, parse_measure, resolve_key

__all__ = ["REGISTRY", "Display", "EmbeddingSpec", "JudgedContext", "JudgedSpec", "LabelSpec", "Measure",
           "MetricSpec", "Param", "Unscorable", "get_spec", "make_measure", "parse_measure", "resolve_key"]
