"""The data model: samples, outcomes with provenance, measures, and typed errors.

``EvaluationResult`` (``core.evaluation``) and the per-metric summary (``core.summary``) need
numpy and are imported from their modules. The names here are imported on first use (PEP 562),
so that importing a module of this package (the settings the command line's options default
to, say) loads that module alone.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_HOMES = {
    "InvalidInputError": "errors", "InvalidParameterError": "errors", "JudgeOutputError": "errors",
    "JudgeUnavailableError": "errors", "RagmeterError": "errors",
    "Display": "measure", "Measure": "measure", "MeasureNotFound": "measure", "MetricSpec": "measure",
    "Param": "measure",
    "Failed": "results", "NotComputed": "results", "Outcome": "results", "Provenance": "results", "Score": "results",
    "Chunk": "sample", "Sample": "sample",
}

__all__ = [
    "Chunk", "Sample", "Score", "NotComputed", "Failed", "Outcome", "Provenance",
    "RagmeterError", "InvalidInputError", "InvalidParameterError", "JudgeOutputError",
    "JudgeUnavailableError", "Measure", "MeasureNotFound", "MetricSpec", "Param", "Display",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:  # a submodule (``from ragmeter.core import settings``) is found by the import system
        raise AttributeError(f"module 'ragmeter.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ragmeter.core.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
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
