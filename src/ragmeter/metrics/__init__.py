"""The metric registry and every metric family. Importing this package registers them all."""

from ragmeter.metrics import context, conversation, generation, retrieval  # noqa: F401  (registration)
from ragmeter.metrics.spec import REGISTRY, Measure, MetricSpec, Param, get_spec, make_measure, parse_measure

__all__ = ["REGISTRY", "Measure", "MetricSpec", "Param", "get_spec", "make_measure", "parse_measure"]
