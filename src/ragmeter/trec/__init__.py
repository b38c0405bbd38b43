"""trec_eval-compatible evaluation of TREC qrels and run files: small ones (and any, with
``engine='python'`` or without pyarrow) are read and scored in plain Python; pyarrow (``pip
install 'ragmeter[trec]'``) reads and ranks the large files, and scores ragmeter's own measures.
(Names imported on first use: see :mod:`ragmeter._lazy`.)"""

from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_facade

__getattr__, __dir__, __all__ = lazy_facade(__name__)

if TYPE_CHECKING:  # the public names, each imported from its home on first use
    from ragmeter.trec.evaluate import evaluate_trec  # noqa: F401
    from ragmeter.trec.reader import read_qrels, read_run  # noqa: F401
    from ragmeter.trec.result import TrecResult  # noqa: F401
