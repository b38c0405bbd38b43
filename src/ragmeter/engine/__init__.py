"""Planning and running evaluations."""

from ragmeter.engine.evaluate import DEFAULT_METRICS, evaluate, resolve_measures
from ragmeter.engine.result import EvaluationResult

__all__ = ["evaluate", "resolve_measures", "EvaluationResult", "DEFAULT_METRICS"]
