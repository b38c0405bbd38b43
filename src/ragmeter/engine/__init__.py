"""Running evaluations: measures resolved, each kind of metric scored (label metrics from the
labels, embedding metrics through the embedder, judged metrics from the evidence that
``ragmeter.evidence`` gathers); locally, or sharded on Ray (``engine.distributed``)."""

from ragmeter.core.evaluation import EvaluationResult
from ragmeter.engine.evaluate import DEFAULT_METRICS, aevaluate, evaluate, resolve_measures

__all__ = ["evaluate", "aevaluate", "resolve_measures", "EvaluationResult", "DEFAULT_METRICS"]
