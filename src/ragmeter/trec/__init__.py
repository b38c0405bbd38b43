"""trec_eval-compatible evaluation of TREC qrels and run files (``pip install 'ragmeter[trec]'``:
pyarrow reads and ranks the files)."""

from ragmeter.core.extras import require

require("ragmeter trec", "pyarrow")

from ragmeter.trec.evaluate import TrecResult, evaluate_trec  # noqa: E402 - after the extra's check
from ragmeter.trec.reader import read_qrels, read_run  # noqa: E402

__all__ = ["TrecResult", "evaluate_trec", "read_qrels", "read_run"]
