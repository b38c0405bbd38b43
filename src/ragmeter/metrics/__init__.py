"""The metric registry and every metric family. Importing this package registers them all."""

from ragmeter.core.measure import Display, Measure, MetricSpec, Param
from ragmeter.metrics import beyond, context, conversation, generation, retrieval  # noqa: F401  (registration)
from ragmeter.metrics.kinds import EmbeddingSpec, JudgedContext, JudgedSpec, LabelSpec, Unscorable
from ragmeter.metrics.registry import REGISTRY, get_spec, make_measure, parse_measure, resolve_key

__all__ = ["REGISTRY", "Display", "EmbeddingSpec", "JudgedContext", "JudgedSpec", "LabelSpec", "Measure",
           "MetricSpec", "Param", "Unscorable", "get_spec", "make_measure", "parse_measure", "resolve_key"]
