"""Readers: datasets (JSONL, CSV), corpora, TREC qrels and runs. Read only; no maths here.
(Names imported on first use: see :mod:`ragmeter.core.lazy_names`.)"""

from typing import TYPE_CHECKING

from ragmeter.core.lazy_names import lazy_names

__all__ = ["Dataset", "load_dataset", "load_corpus", "from_samples", "fingerprint"]
__getattr__, __dir__ = lazy_names(__name__, {"load_corpus": "ragmeter.io.corpus", **dict.fromkeys(
    ["Dataset", "load_dataset", "from_samples", "fingerprint"], "ragmeter.io.dataset")}, globals())

if TYPE_CHECKING:
    from ragmeter.io.corpus import load_corpus
    from ragmeter.io.dataset import Dataset, fingerprint, from_samples, load_dataset
