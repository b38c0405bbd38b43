"""ragmeter: measure every stage of a retrieval-augmented generation pipeline.

>>> import ragmeter
>>> data = ragmeter.load_dataset("examples/warranty/dataset.jsonl")  # doctest: +SKIP
>>> ragmeter.evaluate(data, ["ndcg@5", "mrr@5"]).means()  # doctest: +SKIP

The public names are imported on first use (PEP 562), so ``ragmeter trec`` and other
light entry points do not pay for the engine, the judges and the embedders.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from ragmeter._version import __version__

_HOMES = {
    "Chunk": "ragmeter.core", "Failed": "ragmeter.core", "NotComputed": "ragmeter.core",
    "Provenance": "ragmeter.core", "Sample": "ragmeter.core", "Score": "ragmeter.core",
    "InvalidInputError": "ragmeter.core.errors", "InvalidParameterError": "ragmeter.core.errors",
    "UnsupportedInputError": "ragmeter.core.errors",
    "RagmeterError": "ragmeter.core.errors",
    "EvaluationResult": "ragmeter.core.evaluation", "Measure": "ragmeter.core.measure",
    "evaluate": "ragmeter.engine", "aevaluate": "ragmeter.engine", "evaluate_retriever": "ragmeter.engine.retriever",
    "Dataset": "ragmeter.io", "load_corpus": "ragmeter.io", "load_dataset": "ragmeter.io",
    "log_request": "ragmeter.live.logger",
    "REGISTRY": "ragmeter.metrics", "make_measure": "ragmeter.metrics", "parse_measure": "ragmeter.metrics",
}

_HOMES.update({"RagmeterWarning": "ragmeter.core.errors", "LowCoverageWarning": "ragmeter.core.errors",
               "NothingRetrievedWarning": "ragmeter.core.errors",
               "MissingExtraError": "ragmeter.core.errors"})

# A library's loggers stay silent until the application configures logging (the logging HOWTO's
# advice): records on "ragmeter.*" (retries, throttling, coverage) go where the caller sends them.
logging.getLogger("ragmeter").addHandler(logging.NullHandler())

__all__ = ["__version__", *_HOMES]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ragmeter' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from ragmeter.core import Chunk, Failed, NotComputed, Provenance, Sample, Score
    from ragmeter.core.errors import InvalidInputError, InvalidParameterError, RagmeterError, UnsupportedInputError
    from ragmeter.core.evaluation import EvaluationResult
    from ragmeter.core.measure import Measure
    from ragmeter.engine.evaluate import aevaluate, evaluate
    from ragmeter.engine.retriever import evaluate_retriever
    from ragmeter.io import Dataset, load_corpus, load_dataset
    from ragmeter.live.logger import log_request
    from ragmeter.metrics import REGISTRY, make_measure, parse_measure
