"""The data model: samples, outcomes with provenance, measures, and typed errors.

``EvaluationResult`` (``core.evaluation``) and the per-metric summary (``core.summary``) need
numpy and are imported from their modules, so that importing this package stays light.
"""

from ragmeter.core.errors import (
    InvalidInputError,
    InvalidParameterError,
    JudgeOutputError,
    JudgeUnavailableError,
    RagmeterError,
)
from ragmeter.core.measure import Display, Measure, MeasureNotFound, MetricSpec, Param
from ragmeter.core.results import Failed, NotComputed, Outcome, Provenance, Score
from ragmeter.core.sample import Chunk, Sample

__all__ = [
    "Chunk", "Sample", "Score", "NotComputed", "Failed", "Outcome", "Provenance",
    "RagmeterError", "InvalidInputError", "InvalidParameterError", "JudgeOutputError",
    "JudgeUnavailableError", "Measure", "MeasureNotFound", "MetricSpec", "Param", "Display",
]
