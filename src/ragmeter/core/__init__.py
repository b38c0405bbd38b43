"""The data model: samples, outcomes with provenance, and typed errors."""

from ragmeter.core.errors import (
    InvalidInputError,
    InvalidParameterError,
    JudgeOutputError,
    JudgeUnavailableError,
    RagmeterError,
)
from ragmeter.core.results import Failed, NotComputed, Outcome, Provenance, Score
from ragmeter.core.sample import Chunk, Sample

__all__ = [
    "Chunk", "Sample", "Score", "NotComputed", "Failed", "Outcome", "Provenance",
    "RagmeterError", "InvalidInputError", "InvalidParameterError", "JudgeOutputError",
    "JudgeUnavailableError",
]
