"""Where ``ragmeter trec`` needs pyarrow (``pip install 'ragmeter[trec]'``): the arrow engine,
ragmeter's own measures, a memory limit, qrels and runs given as objects, and the file readers.
trec_eval's measures on files need only the plain-Python engine."""

from __future__ import annotations

import importlib.util
import sys

from ragmeter.core.errors import MissingExtraError


def arrow_installed() -> bool:
    """Whether the arrow engine can run: pyarrow importable, found without importing it
    (pyarrow alone takes 0.2 s)."""
    if "pyarrow" in sys.modules:
        return sys.modules["pyarrow"] is not None
    return importlib.util.find_spec("pyarrow") is not None


def require_arrow(why: str) -> None:
    """:class:`MissingExtraError` naming ``[trec]`` unless pyarrow is installed; ``why``: what
    needs it."""
    if not arrow_installed():
        raise MissingExtraError(f"ragmeter trec ({why})", "trec", "pyarrow")
