"""Readers: datasets from files and objects in every input format (``formats/``, one module each),
corpora, labels files, and ``ragmeter import``'s test collections (``collections/``); writers. No
maths here. (Names imported on first use: see :mod:`ragmeter._lazy`.)"""

from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_facade

__getattr__, __dir__, __all__ = lazy_facade(__name__)

if TYPE_CHECKING:  # the public names, each imported from its home on first use
    from ragmeter.io.corpus import load_corpus
    from ragmeter.io.dataset import Dataset, fingerprint, from_samples, load_dataset
