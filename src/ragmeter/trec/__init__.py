"""trec_eval-compatible evaluation of TREC qrels and run files."""

from ragmeter.trec.evaluate import TrecResult, evaluate_trec
from ragmeter.trec.reader import read_qrels, read_run

__all__ = ["TrecResult", "evaluate_trec", "read_qrels", "read_run"]
