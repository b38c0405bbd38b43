"""Readers: datasets (JSONL, CSV), corpora, TREC qrels and runs. Read only; no maths here."""

from ragmeter.io.corpus import load_corpus
from ragmeter.io.dataset import Dataset, fingerprint, from_samples, load_dataset

__all__ = ["Dataset", "load_dataset", "load_corpus", "from_samples", "fingerprint"]
