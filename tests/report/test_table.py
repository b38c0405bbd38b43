"""``ragmeter.report.table``: The plain per-query table and summary, laid out as the seed article prints them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragmeter
from ragmeter.core.columns import LabelColumns
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.sample import Chunk, Sample
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.dataset import Dataset, from_samples
from ragmeter.report.table import render_table


def test_a_table_with_several_cutoffs_names_each_cutoff() -> None:
    """``-m ndcg@10,mrr`` shows ranks 1-10 and scored RR at the default --k 5: the first relevant
    chunk at rank 7 read as 'RR 0.000' under 'ranks 1-10', and the mean line said 'MRR 0.000'."""
    from ragmeter.report.table import render_table

    rows = [{"id": "q1", "retrieved": list("abcdefg"), "relevant": ["g"]}]
    result = ragmeter.evaluate(rows, "ndcg@10,mrr,hit_rate")  # k=5 for the two without @k
    header, _row, _blank, means = render_table(result).splitlines()[:4]
    assert header.split()[-3:] == ["nDCG@10", "RR@5", "hit@5"]
    assert means.split("|")[1].strip() == "MRR@5 0.000"
    assert result.values("ndcg@10") == [1 / np.log2(8)]  # one relevant at rank 7: 1/log2(8) over 1
    same_k = render_table(ragmeter.evaluate(rows, "ndcg@10,mrr@10")).splitlines()
    assert same_k[0].split()[-2:] == ["nDCG@10", "RR"]  # one cut-off: the ranks shown are its
    assert same_k[1].split()[-1] == f"{1 / 7:.3f}"


SECRET = "sk-fastscore-0123456789"  # a held credential (set as an API key below): redacted in run files


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


@st.composite
def label_samples(draw: Any) -> list[Sample]:
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


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(samples=label_samples(), k=st.sampled_from([None, 2, 5]))
def test_the_table_from_the_columns_is_the_table_from_the_samples(samples: list[Sample], k: int | None) -> None:
    names = ["hit_rate@2", "precision", "ndcg@3", "recall"]
    fast = evaluate(columnar(samples), names, k=k)
    assert render_table(fast) == render_table(per_sample(samples, names, k))
