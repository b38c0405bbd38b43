"""ragmeter: measure every stage of a retrieval-augmented generation pipeline.

>>> import ragmeter
>>> data = ragmeter.load_dataset("examples/warranty/dataset.jsonl")  # doctest: +SKIP
>>> ragmeter.evaluate(data, ["ndcg@5", "mrr@5"]).means()  # doctest: +SKIP

The public names are imported on first use (PEP 562), so ``ragmeter trec`` and other
light entry points do not pay for the engine, the judges and the embedders.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_facade
from ragmeter._version import __version__

# A library's loggers stay silent until the application configures logging (the logging HOWTO's
# advice): records on "ragmeter.*" (retries, throttling, coverage) go where the caller sends them.
logging.getLogger("ragmeter").addHandler(logging.NullHandler())

__getattr__, __dir__, __all__ = lazy_facade(__name__, "__version__")

if TYPE_CHECKING:  # the public names, each imported from its home on first use (and so read by type checkers)
    from ragmeter.core import Chunk, Failed, NotComputed, Provenance, Sample, Score
    from ragmeter.core.errors import (
        InvalidInputError,
        InvalidParameterError,
        LowCoverageWarning,
        MissingExtraError,
        NothingRetrievedWarning,
        RagmeterError,
        RagmeterWarning,
        UnsupportedInputError,
    )
    from ragmeter.core.evaluation import EvaluationResult
    from ragmeter.core.measure import Measure
    from ragmeter.engine.evaluate import aevaluate, evaluate
    from ragmeter.engine.retriever import evaluate_retriever
    from ragmeter.io import Dataset, load_corpus, load_dataset
    from ragmeter.live.logger import log_feedback, log_request
    from ragmeter.metrics import REGISTRY, make_measure, parse_measure
    from ragmeter.metrics.custom import embedding_metric, judged_metric, label_metric, register_metric
