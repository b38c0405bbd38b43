"""The columnar scoring path (``Dataset.columns`` -> ``ScoreColumn`` outcomes) against the
per-Sample path with outcomes held as tuples of ``Score`` objects: the same ``to_dict()``, the
same JSON bytes, the same summaries, means, values, DataFrame and coverage messages, on random
label data with unlabeled samples (NotComputed), empty rankings and undefined values; the
columnar path never touches ``dataset.samples``. Also: a ``ScoreColumn`` is the tuple it
stands for; the bootstrap's batched, threaded draws give what one batch drawn at once gives;
a label-only ``ragmeter eval`` loads no judge, ledger, Ray or report code.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.core import bootstrap
from ragmeter.core.columns import LabelColumns
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.results import NotComputed, Provenance, Score
from ragmeter.core.sample import Chunk, Sample
from ragmeter.core.score_column import ScoreColumn
from ragmeter.core.secrets import redacted_json_lines
from ragmeter.engine.coverage import coverage_message, nothing_retrieved_message
from ragmeter.engine.evaluate import evaluate
from ragmeter.engine.label_scoring import NO_LABELS
from ragmeter.io.dataset import Dataset, from_samples
from ragmeter.io.writer import sample_to_row
from ragmeter.metrics import parse_measure
from ragmeter.report.result_json import result_text
from ragmeter.report.table import render_table
from ragmeter.runs.result_lines import result_lines, sample_lines

pytestmark = pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")

SECRET = "sk-fastscore-0123456789"  # a held credential (set as an API key below): redacted in run files

MEASURES = ["precision@3", "recall@3", "hit_rate@3", "reciprocal_rank@3", "ndcg@3", "ndcg(gain='exp')",
            "precision", "average_precision", "r_precision", "hit_rate(granular=True)@2"]


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


def same_result(fast: EvaluationResult, slow: EvaluationResult) -> None:
    assert fast.measures == slow.measures
    for m in fast.measures:
        assert isinstance(fast.outcomes[m], ScoreColumn) and type(slow.outcomes[m]) is tuple
        assert fast.outcomes[m] == slow.outcomes[m] and slow.outcomes[m] == fast.outcomes[m]
        assert fast.summary(m) == slow.summary(m)  # mean, interval, counts, reasons
        assert fast.values(m) == slow.values(m)
        assert coverage_message(m, fast.outcomes[m]) == coverage_message(m, slow.outcomes[m])
    assert fast.means() == slow.means()
    assert repr(fast) == repr(slow)
    doc = fast.to_dict()
    assert doc == slow.to_dict()
    assert fast.to_dict(samples=False) == slow.to_dict(samples=False)
    text = result_text(fast)
    assert text == result_text(slow) == json.dumps(doc, indent=2, ensure_ascii=False)
    assert nothing_retrieved_message(fast) == nothing_retrieved_message(slow)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(samples=label_samples(), k=st.sampled_from([None, 1, 3, 10]))
def test_columnar_path_gives_the_per_sample_results(samples: list[Sample], k: int | None) -> None:
    names = list(dict.fromkeys(sorted(MEASURES)))
    fast = evaluate(columnar(samples), names, k=k)
    slow = per_sample(samples, names, k)
    assert list(fast.sample_ids) == [s.id for s in samples]
    same_result(fast, slow)


def test_the_cases_the_generator_must_reach() -> None:
    """Unlabeled, unranked and undefined samples on both paths, said with their reasons."""
    samples = [Sample("a", retrieved=(Chunk("x"), Chunk("y")), relevance={"y": 2.0}),
               Sample("b", retrieved=(Chunk("x"),)),  # no labels
               Sample("c", relevance={"x": 1.0}),  # nothing retrieved
               Sample("d", retrieved=(Chunk("x"),), relevance={"x": 0.0})]  # R = 0: recall undefined
    fast = evaluate(columnar(samples), ["recall@2", "precision", "ndcg@2"], k=None)
    same_result(fast, per_sample(samples, ["recall@2", "precision", "ndcg@2"], None))
    recall = fast["recall@2"]
    assert [o.status for o in recall] == ["scored", "not_computed", "scored", "not_computed"]
    assert recall[1] == NotComputed(NO_LABELS, recall.provenance)
    assert fast.summary("recall@2").reasons == {NO_LABELS: 1, "no relevant chunk labeled": 1}
    assert fast.values("precision")[2] is None  # an empty ranking, no cut-off: undefined
    # a: grade 2 at rank 2 over the ideal grade 2 at rank 1; c: nothing retrieved, 0; b and d not computed
    assert fast.summary("ndcg@2").mean == pytest.approx(((2 / np.log2(3)) / 2 + 0) / 2)
    assert fast.summary("ndcg@2").scored == 2


def test_nothing_retrieved_read_from_the_columns() -> None:
    samples = [Sample("a", relevance={"x": 1.0}), Sample("b", relevance={"y": 1.0})]
    fast = evaluate(columnar(samples), ["mrr@5"], k=5)
    message = nothing_retrieved_message(fast)
    assert message is not None and message == nothing_retrieved_message(per_sample(samples, ["mrr@5"], 5))


def column(values: list[float], codes: list[int] | None = None) -> ScoreColumn:
    prov = Provenance("m@5", "m", 1, {}, 5, "retrieved", "0", "fp")
    return ScoreColumn(np.array(values), prov, None if codes is None else np.array(codes), ("why", "other"))


def test_a_column_is_the_tuple_it_stands_for() -> None:
    col = column([0.25, 9.0, 1.0, -0.0], [-1, 1, -1, 0])
    prov = col.provenance
    tup = (Score(0.25, prov), NotComputed("other", prov), Score(1.0, prov), NotComputed("why", prov))
    assert col == tup and tup == col and not (col != tup) and col == column([0.25, 5.0, 1.0, 7.0], [-1, 1, -1, 0])
    assert col != tup[:3] and col != list(tup) and col != column([0.5, 9.0, 1.0, 0.0], [-1, 1, -1, 0])
    assert len(col) == 4 and tuple(col) == tup and list(reversed(col)) == list(reversed(tup))
    assert col[2] is col[2] and col[-4] is next(iter(col)) and list(col)[3] is col[3]  # built once, kept
    assert col[-1] == tup[-1] and col[1:3] == tup[1:3] and col[::-1] == tup[::-1] and col[np.int64(2)] == tup[2]
    with pytest.raises(IndexError):
        col[4]
    with pytest.raises(IndexError):
        col[-5]
    assert type(col[0].value) is float and col.value_list() == [0.25, None, 1.0, None]
    assert col.not_scored_reasons() == ["other", "why"] and col.scored_values().tolist() == [0.25, 1.0]
    assert col.index(tup[2]) == 2 and tup[3] in col and col.count(tup[0]) == 1
    assert pickle.loads(pickle.dumps(col)) == col
    assert repr(col).startswith("ScoreColumn(Score(value=0.25), NotComputed(reason='other'), Score(value=1.0), ...")
    with pytest.raises(ValueError):
        col.values[0] = 1.0  # immutable, as a tuple is
    with pytest.raises(ValueError):
        column([1.0], [2])


def test_a_result_keeps_the_column_and_reads_it() -> None:
    col = column([0.5, 0.0, 1.0], [-1, 0, -1])
    samples = tuple(Sample(f"q{i}") for i in range(3))
    m = parse_measure("mrr@5")
    r = EvaluationResult(samples, (m,), {m: col}, "fp")
    assert r.outcomes[m] is col and r["mrr"] is col
    assert r.summary(m).mean == 0.75 and r.summary(m).reasons == {"why": 1} and r.means() == {str(m): 0.75}
    assert r.outcome("mrr", "q2") == Score(1.0, col.provenance)
    frame = r.to_dataframe()
    assert frame.index.tolist() == ["q0", "q1", "q2"] and math.isnan(frame[str(m)].iloc[1])
    long = r.to_dataframe(long=True)
    assert long["status"].tolist() == ["scored", "not_computed", "scored"] and long["reason"].iloc[1] == "why"


def reference_means(x: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The bootstrap as first written: every resample drawn at once, on one thread."""
    n = len(x)
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(x, return_counts=True)
    if len(distinct) * bootstrap.MULTINOMIAL_COST < n:
        terms = rng.multinomial(n, counts / n, size=resamples) * distinct[None, :]
    else:
        terms = np.take(x, rng.integers(0, n, size=(resamples, n), dtype=np.uint32))
    return terms.sum(axis=1) / n


@pytest.mark.parametrize("n", [2, 7, 300, 4000])
@pytest.mark.parametrize("batch", [None, 1, 3, 64, 5000])
def test_batched_threaded_draws_are_the_draws_of_one_batch(n: int, batch: int | None) -> None:
    rng = np.random.default_rng(n)
    for x in (np.sort(rng.random(n)), np.sort(rng.integers(0, 3, n) / 2.0)):
        expected = reference_means(x, 500, 11)
        got = np.concatenate(list(bootstrap.resample_means(x, resamples=500, seed=11, batch=batch)))
        assert np.array_equal(got, expected)


def test_default_batches_are_many_and_still_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the default batch size a 20,000-value bootstrap takes many batches (the threaded
    path) and gives what one batch gives."""
    x = np.sort(np.random.default_rng(5).random(20_000))
    assert bootstrap.BATCH_BYTES // (16 * len(x)) < bootstrap.RESAMPLES
    expected = reference_means(x, bootstrap.RESAMPLES, bootstrap.SEED)
    lo, hi = np.quantile(expected, [0.025, 0.975])
    assert bootstrap.bootstrap_ci(x) == (float(lo), float(hi))


def test_label_only_eval_loads_no_judge_ledger_ray_or_report_code(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": "?", "retrieved": ["a", "b"],
                                        "relevant": {"b": 1}}) + "\n" for i in range(3)))
    script = (
        "import sys\n"
        "from ragmeter.cli.main import run\n"
        f"sys.argv = ['ragmeter', 'eval', {str(data)!r}, '-m', 'ndcg@10,mrr@10', '--no-save',"
        " '--format', sys.argv[1]]\n"
        "try:\n    run()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('ragmeter.judges', 'ragmeter.ledger', 'ray',"
        " 'ragmeter.engine.distributed', 'ragmeter.evidence.planner', 'ragmeter.engine.judged_scoring',"
        " 'ragmeter.embeddings.backends', 'ragmeter.report.html', 'httpx')))\n"
        "print('LOADED', bad, file=sys.stderr)\n")
    for fmt in ("json", "table"):
        done = subprocess.run([sys.executable, "-c", script, fmt], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "LOADED []" in done.stderr, done.stderr


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(samples=label_samples(), k=st.sampled_from([None, 2, 5]))
def test_the_table_from_the_columns_is_the_table_from_the_samples(samples: list[Sample], k: int | None) -> None:
    names = ["hit_rate@2", "precision", "ndcg@3", "recall"]
    fast = evaluate(columnar(samples), names, k=k)
    assert render_table(fast) == render_table(per_sample(samples, names, k))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(samples=label_samples(), k=st.sampled_from([None, 3]))
def test_results_lines_are_the_redacted_rows(samples: list[Sample], k: int | None) -> None:
    """results.jsonl from the columns: the lines of the redacted to_dict rows, byte for byte."""
    names = ["precision@3", "ndcg", "recall@2"]
    fast = evaluate(columnar(samples), names, k=k)
    slow = per_sample(samples, names, k)
    with patched_env("FASTSCORE_API_KEY", SECRET):
        expected = list(redacted_json_lines(slow.to_dict()["samples"]))
        assert list(result_lines(fast)) == expected == list(result_lines(slow))
    assert not any(SECRET in line or "u:pw@" in line for line in expected)


@contextmanager
def patched_env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


texts = st.one_of(st.none(), st.sampled_from(["", "plain", 'q "é" \\ \n\t\x01', "see http://u:pw@host/x", SECRET]),
                  st.text(max_size=8))


@st.composite
def any_samples(draw: Any) -> list[Sample]:
    out = []
    for i in range(draw(st.integers(0, 6))):
        chunk_ids = draw(st.lists(st.sampled_from(["a", "b", "é\"c", SECRET]), max_size=3, unique=True))
        scored = draw(st.booleans())
        chunks = tuple(Chunk(c, score=draw(st.floats(allow_nan=False)) if scored else None,
                             text=draw(texts) if scored else None) for c in chunk_ids)
        grade = st.one_of(st.sampled_from([0.0, 1.0, -0.0, 2.5, 1e300]), st.integers(-1, 3))
        out.append(Sample(draw(st.sampled_from([f"q{i}", f"q{i} {SECRET}", f"q{i}\u2028"])), question=draw(texts),
                          retrieved=chunks, relevance=draw(st.dictionaries(st.sampled_from(["a", "x", "ü"]), grade,
                                                                           max_size=3)),
                          answer=draw(texts), reference=draw(texts), answerable=draw(st.booleans()),
                          context=draw(st.one_of(st.none(), st.just(("a",)))),
                          metadata=draw(st.sampled_from([{}, {"k": 1}]))))
    return out


@settings(max_examples=150, deadline=None)
@given(samples=any_samples())
def test_sample_lines_are_the_redacted_rows(samples: list[Sample]) -> None:
    """samples.jsonl from the template: the lines of the redacted sample_to_row rows, byte for byte."""
    with patched_env("FASTSCORE_API_KEY", SECRET):
        expected = list(redacted_json_lines(sample_to_row(s) for s in samples))
        assert list(sample_lines(samples)) == expected
    assert not any(SECRET in line or "u:pw@" in line for line in expected)


@pytest.mark.parametrize("n", [2, 3, 1000, 4000, 2**31 + 1, 3 * 2**30 + 7, 2**32 - 1, 2**32, 2**33 + 5])
def test_uniform_indices_are_numpys_integers(n: int) -> None:
    """The same draws as ``Generator.integers(0, n, dtype=np.uint32)`` call by call, also where
    about half the 32-bit draws are rejected (n just over 2**31) and past 2**32 (int64)."""
    counts = [1, 7, 0, 1000, 3, 4096, 5]
    dtype = np.uint32 if n < 2**32 else np.int64
    reference = np.random.default_rng(n)
    expected = [reference.integers(0, n, size=c, dtype=dtype) for c in counts]
    got = list(bootstrap.uniform_indices(np.random.default_rng(n), n, counts))
    assert [g.dtype for g in got] == [e.dtype for e in expected]
    assert all(np.array_equal(g, e) for g, e in zip(got, expected))
