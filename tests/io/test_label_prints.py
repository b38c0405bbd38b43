"""The label fingerprints written from columns (io/label_prints.py) hash the bytes the old path
hashes: ``canonical_texts`` of each sample, UTF-8, a newline after each record; and a file of
hostile records read by the columnar reader gives the general reader's fingerprints and scores."""

from __future__ import annotations

import hashlib
import json
import math
from types import MappingProxyType
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.core.sample import Chunk, Sample
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.dataset import canonical_texts, load_dataset
from ragmeter.io.label_prints import ranked_texts, record_texts, update_digests
from tests.hostile import FUZZ, HOSTILE_TEXT

pytestmark = pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning")

MEASURES = ["precision@3", "recall@3", "hit_rate@3", "reciprocal_rank@3", "ndcg@3"]


def encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate: refused when read, never hashed
        return False
    return True


TEXT = st.one_of(HOSTILE_TEXT, st.text(max_size=10),
                 st.sampled_from(['"', "\\", ":", ",", '":1,"', "a,", ":a", "\U0001F600", "\x7f", "\\u0000"])
                 ).filter(encodable)
ID = TEXT.filter(lambda s: bool(s.strip()))
GRADE = st.one_of(st.integers(0, 3).map(float), st.floats(allow_nan=False, allow_infinity=False),
                  st.sampled_from([1e16, 1e22, 5e-324, -0.0, 1.7976931348623157e308]))


@st.composite
def columns(draw: st.DrawFn) -> tuple[list[str], list[str | None], list[list[str]], list[dict[str, float]],
                                      list[str | None] | None, list[str | None] | None]:
    n = draw(st.integers(1, 5))
    ids = draw(st.lists(ID, min_size=n, max_size=n, unique=True))
    questions = draw(st.lists(st.none() | TEXT, min_size=n, max_size=n))
    ranked = draw(st.lists(st.lists(ID, max_size=4, unique=True), min_size=n, max_size=n))
    labels = draw(st.lists(st.dictionaries(TEXT, GRADE, max_size=3), min_size=n, max_size=n))
    answers = draw(st.none() | st.lists(st.none() | TEXT, min_size=n, max_size=n))
    references = draw(st.none() | st.lists(st.none() | TEXT, min_size=n, max_size=n))
    return ids, questions, ranked, labels, answers, references


def old_texts(ids: list[str], questions: list[str | None], ranked: list[list[str]], labels: list[dict[str, float]],
              answers: list[str | None] | None, references: list[str | None] | None) -> tuple[bytes, bytes]:
    """What ``Fingerprints.add`` hashes for the samples these columns make."""
    full, test = [], []
    for i, sid in enumerate(ids):
        s = Sample(id=sid, question=questions[i], retrieved=tuple(map(Chunk, ranked[i])),
                   relevance=MappingProxyType(labels[i]), answer=None if answers is None else answers[i],
                   reference=None if references is None else references[i], metadata=MappingProxyType({}))
        f, t = canonical_texts(s)
        full.append(f.encode() + b"\n")
        test.append(t.encode() + b"\n")
    return b"".join(full), b"".join(test)


@FUZZ
@given(cols=columns())
def test_column_texts_are_the_canonical_texts_byte_for_byte(cols: Any) -> None:
    ids, questions, ranked, labels, answers, references = cols
    want = old_texts(*cols)
    escaped = record_texts(ids, questions, ranked_texts(ranked, clean=False), labels, answers, references,
                           clean=False)
    assert escaped == want
    strings = [*ids, *filter(None, questions), *(x for r in ranked for x in r), *(k for d in labels for k in d),
               *filter(None, answers or []), *filter(None, references or [])]
    if not any(json.dumps(s, ensure_ascii=False) != f'"{s}"' for s in strings):  # none holds what JSON escapes
        assert record_texts(ids, questions, ranked_texts(ranked, clean=True), labels, answers, references,
                            clean=True) == want
    full, test = hashlib.sha256(), hashlib.sha256()
    update_digests(full, test, ids, questions, ranked_texts(ranked, clean=False), labels, answers, references,
                   clean=False)
    assert (full.digest(), test.digest()) == (hashlib.sha256(want[0]).digest(), hashlib.sha256(want[1]).digest())


@FUZZ
@given(cols=columns(), compact=st.booleans())
def test_a_hostile_file_gives_the_general_readers_fingerprints_and_scores(cols: Any, compact: bool,
                                                                          tmp_path_factory: Any) -> None:
    ids, questions, ranked, labels, answers, references = cols
    rows = []
    for i, sid in enumerate(ids):
        row: dict[str, Any] = {"id": sid, "question": questions[i], "retrieved": ranked[i], "relevant": labels[i]}
        if answers is not None:
            row["answer"] = answers[i]
        if references is not None:
            row["reference"] = references[i]
        rows.append(row)
    separators = (",", ":") if compact else (", ", ": ")
    path = tmp_path_factory.mktemp("hostile") / "d.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False, separators=separators) + "\n" for r in rows),
                    encoding="utf-8")
    fast = load_dataset(str(path))
    with patch("ragmeter.io.dataset.read_label_file", lambda _: None):
        slow = load_dataset(str(path))
    assert fast.columns is not None and slow.columns is None  # the columnar reader took the file
    assert (fast.fingerprint, fast.testset_fingerprint) == (slow.fingerprint, slow.testset_fingerprint)
    got, want = evaluate(fast, MEASURES, k=3), evaluate(slow, MEASURES, k=3)
    for m in MEASURES:
        a, b = got.values(m), want.values(m)
        assert len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b))
