"""trec_eval-compatible evaluation of TREC qrels and run files (``pip install 'ragmeter[trec]'``:
pyarrow reads and ranks the large files; small ones are read and scored in plain Python).
(Names imported on first use: see :mod:`ragmeter._lazy`.)"""

import importlib.util
import sys
from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_facade
from ragmeter.core.errors import MissingExtraError


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (pyarrow alone takes 0.2 s)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


if not _installed("pyarrow"):
    raise MissingExtraError("ragmeter trec", "trec", "pyarrow")

__getattr__, __dir__, __all__ = lazy_facade(__name__)

if TYPE_CHECKING:  # the public names, each imported from its home on first use
    from ragmeter.trec.evaluate import evaluate_trec  # noqa: F401
    from ragmeter.trec.reader import read_qrels, read_run  # noqa: F401
    from ragmeter.trec.result import TrecResult  # noqa: F401
