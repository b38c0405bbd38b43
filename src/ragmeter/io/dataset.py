"""Load a dataset file into samples, and fingerprint it.

Formats by extension: ``.jsonl`` / ``.ndjson`` (one sample per line) and ``.csv``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.gc_pause import gc_paused
from ragmeter.core.sample import Sample
from ragmeter.io.corpus import attach_texts, load_corpus
from ragmeter.io.csv_table import iter_csv
from ragmeter.io.jsonl import iter_jsonl
from ragmeter.io.conversations import flatten, is_conversational
from ragmeter.io.rows import make_samples


@dataclass(frozen=True)
class Dataset:
    """Samples read from one file, with the file's path and a content fingerprint."""

    samples: tuple[Sample, ...]
    path: str | None
    fingerprint: str
    testset_fingerprint: str = ""  # questions, labels and references only: equal for two systems' runs

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self):
        return iter(self.samples)


def load_dataset(path: str | Path, *, corpus: str | Path | None = None) -> Dataset:
    """Read and validate a dataset (and optionally a corpus that supplies chunk texts)."""
    with gc_paused():
        return _load(str(path), corpus)


def _load(path: str, corpus: str | Path | None) -> Dataset:
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        records = list(iter_jsonl(path))
    elif suffix == ".csv":
        records = list(iter_csv(path))
    else:
        raise InvalidInputError(f"unknown dataset format {suffix or '(no extension)'!r}", file=path,
                                fix="use .jsonl or .csv (TREC files go to `ragmeter trec QRELS RUN`)")
    if any(is_conversational(r) for _, r in records):
        records = flatten(records, path)
    samples = make_samples(records, path)
    if corpus is not None:
        samples = attach_texts(samples, load_corpus(corpus))
    return from_samples(samples, path=path)


def from_samples(samples: Iterable[Sample], *, path: str | None = None) -> Dataset:
    samples = tuple(samples)
    f = Fingerprints()
    for s in samples:
        f.add(s)
    full, test = f.digests()
    return Dataset(samples=samples, path=path, fingerprint=full, testset_fingerprint=test)


TEST_FIELDS = ("id", "question", "relevance", "reference", "answerable", "reference_claims")


class Fingerprints:
    """Both fingerprints, fed one sample at a time (so a streamed file gets the same ones).

    - the dataset fingerprint: SHA-256 (first 16 hex) of every sample's canonical JSON,
      independent of the file format and whitespace;
    - the test-set fingerprint: the same over what defines the test (questions, labels,
      references), not the system's outputs, so two systems scored on one test set share it.
    """

    def __init__(self) -> None:
        self._full, self._test = hashlib.sha256(), hashlib.sha256()

    def add(self, s: Sample) -> None:
        c = _canonical(s)
        self._full.update(json.dumps(c, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        self._test.update(json.dumps({k: c[k] for k in TEST_FIELDS}, sort_keys=True, ensure_ascii=False).encode()
                          + b"\n")

    def digests(self) -> tuple[str, str]:
        return self._full.hexdigest()[:16], self._test.hexdigest()[:16]


def fingerprint(samples: Iterable[Sample]) -> str:
    f = Fingerprints()
    for s in samples:
        f.add(s)
    return f.digests()[0]


def _canonical(s: Sample) -> dict:
    return {
        "id": s.id, "question": s.question,
        "retrieved": [[c.id, c.score, c.text] for c in s.retrieved],
        "relevance": dict(sorted(s.relevance.items())), "context": list(s.context) if s.context is not None else None,
        "answer": s.answer, "reference": s.reference, "answerable": s.answerable,
        "metadata": dict(s.metadata),
        "reference_claims": list(s.reference_claims) if s.reference_claims is not None else None,
        "answer_claims": list(s.answer_claims) if s.answer_claims is not None else None,
    }
