"""The columnar label path's shared test pieces: samples it must never read, the dataset as the
columnar reader gives it, the per-sample path to compare with, and random labeled samples whose
ids carry text a run file must escape or redact (``secret``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from hypothesis import strategies as st

from ragmeter.core.columns import LabelColumns
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.sample import Chunk, Sample
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.dataset import Dataset, from_samples


class Untouchable(Sequence[Sample]):
    """Samples that fail the test when read: the columnar path must never build one."""

    def __len__(self) -> int:
        raise AssertionError("dataset.samples was read (len) on the columnar path")

    def __getitem__(self, index: Any) -> Any:
        raise AssertionError("dataset.samples was read (item) on the columnar path")

    def __iter__(self) -> Iterator[Sample]:
        raise AssertionError("dataset.samples was read (iteration) on the columnar path")


def columnar(samples: Sequence[Sample]) -> Dataset:
    """The dataset as the columnar reader gives it, its samples unreadable."""
    plain = from_samples(samples, path="data.jsonl")
    return Dataset(samples=Untouchable(), path=plain.path, fingerprint=plain.fingerprint,  # type: ignore[arg-type]
                   testset_fingerprint=plain.testset_fingerprint, columns=LabelColumns.from_samples(samples))


def per_sample(samples: Sequence[Sample], measures: list[str], k: int | None) -> EvaluationResult:
    """Today's path: scored from the samples, every outcome an object in a tuple."""
    r = evaluate(from_samples(samples, path="data.jsonl"), measures, k=k)
    return EvaluationResult(tuple(samples), r.measures, {m: tuple(r.outcomes[m]) for m in r.measures},
                            r.dataset_fingerprint, r.dataset_path, testset_fingerprint=r.testset_fingerprint)


ids = st.sampled_from([f"c{i}" for i in range(8)])


grades = st.sampled_from([0.0, 1.0, 1.0, 2.0, 3.0])


def label_samples(secret: str) -> st.SearchStrategy[list[Sample]]:
    """1 to 12 samples of up to 6 retrieved ids and up to 4 graded labels; some ids hold ``secret``."""
    SECRET = secret

    @st.composite
    def draw_samples(draw: Any) -> list[Sample]:
        n = draw(st.integers(1, 12))
        out = []
        for i in range(n):
            retrieved = draw(st.lists(ids, max_size=6, unique=True))  # empty rankings included
            labels = draw(st.dictionaries(ids, grades, max_size=4))  # no labels: NotComputed
            name = draw(st.sampled_from([f"q{i}", f"q{i} \"é\"\n", f"q{i}%s", f"q{i} http://u:pw@host/x",
                                         f"q{i} {SECRET}"]))
            out.append(Sample(name, question=f"question {i}", retrieved=tuple(Chunk(c) for c in retrieved),
                              relevance=labels))
        return out

    return draw_samples()
