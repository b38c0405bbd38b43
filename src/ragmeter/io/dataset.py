"""Load a dataset (a file, or data already in memory) into samples, and fingerprint it.

The shapes accepted are :mod:`ragmeter.io.shapes`'s: ``.jsonl`` / ``.ndjson``, ``.json``
(an array, or lines), ``.csv`` and ``.parquet`` files; lists of dicts, DataFrames, Hugging
Face datasets, Ragas and DeepEval samples.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from operator import attrgetter
from pathlib import Path
from typing import Any

from ragmeter.core.columns import LabelColumns
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.gc_pause import gc_paused
from ragmeter.core.history import LineLedger, TurnHistory, with_histories, written
from ragmeter.core.sample import Sample
from ragmeter.io.label_file import read_label_file


@dataclass(frozen=True)
class Dataset:
    """Samples read from one file, with the file's path and a content fingerprint.

    ``samples`` is a tuple, or (a file of plain label records, read into ``columns``) a
    sequence that builds each sample on first access."""

    samples: Sequence[Sample]
    path: str | None
    fingerprint: str
    testset_fingerprint: str = ""  # questions, labels and references only: equal for two systems' runs
    columns: LabelColumns | None = None  # every record a plain label record: ids, rankings and labels as lists

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def __repr__(self) -> str:
        where = f", path={self.path!r}" if self.path else ""
        return f"Dataset({len(self.samples)} samples{where}, fingerprint={self.fingerprint!r})"

    def _repr_html_(self) -> str:
        from ragmeter.core.notebook_html import table_html

        rows = [(s.id, s.question, len(s.retrieved), len(s.relevance), "yes" if s.answer else "")
                for s in self.samples]
        return table_html(repr(self), ("id", "question", "retrieved", "labeled relevant", "answer"), rows)


def load_dataset(data: Any, *, corpus: str | Path | None = None) -> Dataset:
    """Read and validate a dataset, and optionally a corpus file that supplies chunk texts.

    Parameters
    ----------
    data : path, records or samples
        A file (``.jsonl`` / ``.ndjson``, ``.json``: an array or one object per line, ``.csv``,
        ``.parquet``) of one sample per record (``id``, ``question``, ``retrieved``,
        ``relevant``, ``answer``, ...) or of conversations (``turns``, one sample per turn); or
        data in memory: a list of dicts, a pandas DataFrame, a Hugging Face
        ``datasets.Dataset``, Ragas samples or ``EvaluationDataset``, DeepEval test cases, a
        list of :class:`Sample`, or a :class:`Dataset` (returned as is unless a corpus is
        given). Ragas and DeepEval field names are read as ragmeter's; contexts given as texts
        get content-hash chunk ids, and reference contexts given as texts become labels by
        exact text match (:mod:`ragmeter.io.formats`).
    corpus : str or Path, optional
        A chunk id -> text file (``.jsonl`` or ``.csv``) for chunks given by id only.

    Returns
    -------
    Dataset
        The samples, in order, with the dataset's fingerprint (and the test set's: the
        questions and labels without the system's outputs).

    Raises
    ------
    InvalidInputError
        Bad input, naming the file, line, record and field and the fix: an unknown format, a
        line that is not JSON or UTF-8, a duplicate or missing id, an unknown field, a chunk
        listed twice in one ranking.
    UnsupportedInputError
        An object of a kind ragmeter does not read.

    Examples
    --------
    >>> data = load_dataset("examples/warranty/dataset.jsonl", corpus="examples/warranty/corpus.jsonl")
    >>> len(data.samples), data.samples[0].id, data.samples[0].retrieved_ids[:2]
    (6, 'q1', ('warranty-r1', 'warranty-r2'))
    >>> data.samples[0].retrieved[0].text
    'The R1 router carries a 12-month limited...'
    >>> rows = [{"user_input": "How long is the warranty?", "retrieved_contexts": ["12 months."],
    ...          "response": "12 months."}]
    >>> load_dataset(rows).samples[0].retrieved_ids
    ('text-...',)
    """
    with gc_paused():  # many small objects, no cycles: the collector would only rescan them
        return _load(data, corpus)


def _load(data: Any, corpus: str | Path | None) -> Dataset:
    if isinstance(data, Dataset):
        samples = list(data.samples)
        path = data.path
    elif isinstance(data, (list, tuple)) and data and all(isinstance(s, Sample) for s in data):
        samples, path = list(data), None
    else:
        if corpus is None and isinstance(data, (str, os.PathLike)) \
                and Path(os.fspath(data)).suffix.lower() in (".jsonl", ".ndjson"):
            plain = read_label_file(data)  # None unless every record is a plain label record
            if plain is not None:
                return Dataset(samples=plain.samples(), path=str(os.fspath(data)), fingerprint=plain.fingerprint,
                               testset_fingerprint=plain.testset_fingerprint, columns=plain.columns)
        from ragmeter.io.formats.conversations import flatten  # the general reader, for any other data
        from ragmeter.io.formats.registry import FILE_FORMATS, is_conversational
        from ragmeter.io.rows import make_samples
        from ragmeter.io.shapes import read_records

        source = read_records(data)
        records = source.rows
        whole = next((f for f in FILE_FORMATS if f.recognises(records)), None)  # a trace export: grouped by trace
        if whole is not None:
            samples = whole.samples(records, source.label)
        else:
            if any(is_conversational(r) for _, r in records):
                records = flatten(records, source.label, source.unit)
            samples = with_histories(make_samples(records, source.label, unit=source.unit))  # a run's samples.jsonl
        path = source.path
        if not samples:
            raise InvalidInputError("no samples", file=source.label, fix="give at least one record")
    if corpus is not None:
        from ragmeter.io.corpus import attach_texts, load_corpus

        samples = attach_texts(samples, load_corpus(corpus))
    elif isinstance(data, Dataset):
        return data
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

    A conversation turn's history (:class:`~ragmeter.core.history.TurnHistory`) enters the
    dataset fingerprint as the lines of its conversation no earlier turn brought, and how many
    lines come before it: every line hashed once, so a conversation of n turns costs n lines, not
    n histories (hashing each turn's whole history was quadratic).
    """

    def __init__(self) -> None:
        self._full, self._test = hashlib.sha256(), hashlib.sha256()
        self._lines = LineLedger()

    def add(self, s: Sample) -> None:
        metadata = None
        if any(isinstance(v, TurnHistory) for v in s.metadata.values()):
            metadata = {k: written(self._lines, v) if isinstance(v, TurnHistory) else v
                        for k, v in s.metadata.items()}
        full, test = canonical_texts(s, metadata)
        self._full.update(full.encode() + b"\n")
        self._test.update(test.encode() + b"\n")

    def digests(self) -> tuple[str, str]:
        return self._full.hexdigest()[:16], self._test.hexdigest()[:16]


def fingerprint(samples: Iterable[Sample]) -> str:
    f = Fingerprints()
    for s in samples:
        f.add(s)
    return f.digests()[0]


#: The JSON of the canonical dict, compact (the dataset fingerprint) and with json's default
#: separators (the test set's), keys sorted.
FULL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
TEST_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False)


def canonical_texts(s: Sample, metadata: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """``FULL_JSON.encode(_canonical(s))`` and ``TEST_JSON.encode`` of its test fields, written
    field by field: the canonical dict's keys are fixed, so its JSON is its sorted keys with
    each value's own JSON (the C encoder writes a value the same alone or nested). Strings,
    booleans, finite float labels and chunks given by id alone are written directly; any other
    value goes through the encoder. ``metadata``: written in place of the sample's own (a turn's
    history as :class:`Fingerprints` writes it)."""
    meta = s.metadata if metadata is None else metadata
    ranked = s.retrieved
    ids = list(map(_ID, ranked))
    joined = "\0".join(ids) if set(map(type, ids)) <= _STR else None
    if joined is not None and set(map(_SCORE, ranked)) <= _NONE and set(map(_TEXT, ranked)) <= _NONE \
            and "\\" not in joined and joined.count("\0") == len(ids) - 1:
        # chunks given by id alone: escaping is per character, so the ids escaped together with a
        # NUL between them (in no id, and no backslash either) are each id escaped, NUL as \u0000
        retrieved = "[]" if not ids else \
            "[[" + encode_basestring(joined).replace("\\u0000", '",null,null],["') + ",null,null]]"
    else:
        retrieved = "[" + ",".join(FULL_JSON.encode([c.id, c.score, c.text]) for c in ranked) + "]"
    rel_full, rel_test = _relevance_texts(s.relevance)
    sid, question, reference, answerable = _text(s.id), _text(s.question), _text(s.reference), _flag(s.answerable)
    ref_claims = None if s.reference_claims is None else list(s.reference_claims)
    answer_context = "" if s.answer_context is None else \
        f',"answer_context":{FULL_JSON.encode([[c.id, c.score, c.text] for c in s.answer_context])}'
    full = (f'{{"answer":{_text(s.answer)},"answer_claims":'
            f'{_json(None if s.answer_claims is None else list(s.answer_claims), FULL_JSON)}{answer_context},'
            f'"answerable":{answerable},"context":{_json(None if s.context is None else list(s.context), FULL_JSON)},'
            f'"id":{sid},"metadata":{_json(dict(meta), FULL_JSON) if meta else "{}"},'
            f'"question":{question},"reference":{reference},"reference_claims":{_json(ref_claims, FULL_JSON)},'
            f'"relevance":{rel_full},"retrieved":{retrieved}}}')
    test = (f'{{"answerable": {answerable}, "id": {sid}, "question": {question}, "reference": {reference}, '
            f'"reference_claims": {_json(ref_claims, TEST_JSON)}, "relevance": {rel_test}}}')
    return full, test


_ID, _SCORE, _TEXT = attrgetter("id"), attrgetter("score"), attrgetter("text")
_NONE, _STR, _FLOAT = {None}, {str}, {float}


def _text(value: Any) -> str:
    """A string's JSON (or null); any other value through the encoder."""
    if value is None:
        return "null"
    return encode_basestring(value) if type(value) is str else FULL_JSON.encode(value)


def _flag(value: Any) -> str:
    if value is True:
        return "true"
    return "false" if value is False else FULL_JSON.encode(value)


def _json(value: Any, encoder: json.JSONEncoder) -> str:
    return "null" if value is None else encoder.encode(value)


def _relevance_texts(relevance: Mapping[str, float]) -> tuple[str, str]:
    """The labels' JSON, compact and with default separators, keys sorted."""
    if not relevance:
        return "{}", "{}"
    items = sorted(relevance.items())
    keys, values = [k for k, _ in items], [v for _, v in items]
    if set(map(type, keys)) == _STR and set(map(type, values)) == _FLOAT and all(map(math.isfinite, values)):
        pairs = list(zip(map(encode_basestring, keys), map(float.__repr__, values)))
        return "{" + ",".join(map(":".join, pairs)) + "}", "{" + ", ".join(map(": ".join, pairs)) + "}"
    plain = dict(items)
    return FULL_JSON.encode(plain), TEST_JSON.encode(plain)


def _canonical(s: Sample) -> dict:
    return {
        "id": s.id, "question": s.question,
        "retrieved": [[c.id, c.score, c.text] for c in s.retrieved],
        "relevance": dict(sorted(s.relevance.items())), "context": list(s.context) if s.context is not None else None,
        "answer": s.answer, "reference": s.reference, "answerable": s.answerable,
        "metadata": dict(s.metadata),
        "reference_claims": list(s.reference_claims) if s.reference_claims is not None else None,
        "answer_claims": list(s.answer_claims) if s.answer_claims is not None else None,
        **({"answer_context": [[c.id, c.score, c.text] for c in s.answer_context]}
           if s.answer_context is not None else {}),  # only when set: every other fingerprint stays
    }
