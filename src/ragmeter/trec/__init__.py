"""trec_eval-compatible evaluation of TREC qrels and run files: small ones (and any, with
``engine='python'`` or without pyarrow) are read and scored in plain Python; pyarrow (``pip
install 'ragmeter[trec]'``) reads and ranks the large files, and scores ragmeter's own measures.
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


def arrow_installed() -> bool:
    """Whether the arrow engine can run (pyarrow installed)."""
    return _installed("pyarrow")


def require_arrow(why: str) -> None:
    """:class:`MissingExtraError` naming ``[trec]`` unless pyarrow is installed; ``why``: what
    needs it (the arrow engine, ragmeter's measures, a memory limit)."""
    if not arrow_installed():
        raise MissingExtraError(f"ragmeter trec ({why})", "trec", "pyarrow")

__getattr__, __dir__, __all__ = lazy_facade(__name__)

if TYPE_CHECKING:  # the public names, each imported from its home on first use
    from ragmeter.trec.evaluate import evaluate_trec  # noqa: F401
    from ragmeter.trec.reader import read_qrels, read_run  # noqa: F401
    from ragmeter.trec.result import TrecResult  # noqa: F401
