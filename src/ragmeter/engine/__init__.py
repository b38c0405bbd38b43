"""Planning and running evaluations: measures resolved, evidence planned and gathered through
the judge, each kind of metric scored; locally, or sharded on Ray (``engine.distributed``)."""

from ragmeter.core.evaluation import EvaluationResult
from ragmeter.engine.evaluate import DEFAULT_METRICS, aevaluate, evaluate, resolve_measures

__all__ = ["evaluate", "aevaluate", "resolve_measures", "EvaluationResult", "DEFAULT_METRICS"]
