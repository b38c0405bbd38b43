"""ragmeter: measure every stage of a retrieval-augmented generation pipeline.

>>> import ragmeter
>>> data = ragmeter.load_dataset("examples/warranty/dataset.jsonl")  # doctest: +SKIP
>>> ragmeter.evaluate(data, ["ndcg@5", "mrr@5"]).means()  # doctest: +SKIP
"""

from ragmeter._version import __version__
from ragmeter.core import Chunk, Failed, NotComputed, Provenance, Sample, Score
from ragmeter.core.errors import InvalidInputError, InvalidParameterError, RagmeterError
from ragmeter.engine import EvaluationResult, evaluate
from ragmeter.engine.live import evaluate_retriever
from ragmeter.io import Dataset, load_corpus, load_dataset
from ragmeter.live.logger import log_request
from ragmeter.metrics import REGISTRY, make_measure, parse_measure

__all__ = [
    "__version__", "Chunk", "Sample", "Score", "NotComputed", "Failed", "Provenance", "Dataset",
    "load_dataset", "load_corpus", "evaluate", "evaluate_retriever", "log_request", "EvaluationResult",
    "parse_measure", "make_measure", "REGISTRY", "RagmeterError", "InvalidInputError", "InvalidParameterError",
]
