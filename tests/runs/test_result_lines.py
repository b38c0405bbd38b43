"""A run's ``samples.jsonl`` written from the columnar reader's columns (no ``Sample`` built)
against today's writer: the redacted ``json.dumps(sample_to_row(s), ensure_ascii=False)`` of
each sample the general reader builds, byte for byte.

The records are random plain label records (unicode, quotes, backslashes, control characters,
int and float grades, labels as lists and objects, optional question/answer/reference), with
texts and ids that hold a held credential or a URL with userinfo, so the redacting lines are
reached too.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ragmeter.core.sample import Chunk, Sample
from ragmeter.core.secrets import redacted_json_lines
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.dataset import load_dataset
from ragmeter.io.label_file import LazySamples
from ragmeter.io.writer import sample_to_row
from ragmeter.runs.result_lines import result_lines, sample_lines
from tests.columnar_samples import columnar, label_samples, per_sample
from tests.io.test_label_file import general, grades, records, texts

SECRET = "sk-fastsave-0123456789"  # held as an API key below: redacted in run files
LEAKS = st.sampled_from([SECRET, "see http://u:pw@host/x", "x@y", "https://a:b@c", f'"{SECRET}"'])


@contextmanager
def held(value: str) -> Iterator[None]:
    old = os.environ.get("FASTSAVE_API_KEY")
    os.environ["FASTSAVE_API_KEY"] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ["FASTSAVE_API_KEY"]
        else:
            os.environ["FASTSAVE_API_KEY"] = old


@st.composite
def leaky_records(draw: st.DrawFn) -> list[dict[str, Any]]:
    """``records()`` with a credential or a URL with userinfo put into some of the texts."""
    rows = draw(records())
    for row in rows:
        for field in ("question", "answer", "reference"):
            if draw(st.integers(0, 3)) == 0:
                row[field] = draw(texts) + draw(LEAKS) + draw(texts)
        if draw(st.integers(0, 5)) == 0:
            row["retrieved"] = [*(row.get("retrieved") or []), draw(LEAKS)]
        if draw(st.integers(0, 5)) == 0:
            row["relevant"] = {draw(LEAKS): draw(grades)}
        if draw(st.integers(0, 7)) == 0:
            row["id"] = draw(LEAKS) + row["id"]
    seen: set[str] = set()
    return [r for r in rows if not (r["id"] in seen or seen.add(r["id"]))]  # type: ignore[func-returns-value]


def today(samples: Any) -> list[str]:
    """Today's samples.jsonl lines: each sample's row, redacted value by value."""
    return list(redacted_json_lines(sample_to_row(s) for s in samples))


@pytest.mark.slow
@given(rows=leaky_records(), ascii_only=st.booleans(), secret=st.sampled_from([SECRET, 'ab"cdefgh\\i']))
@example(rows=[{"id": "q", "question": SECRET, "retrieved": ["a", "http://u:pw@h"], "relevant": {"a": 1e308}}],
         ascii_only=False, secret=SECRET)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_column_lines_are_todays_lines(rows: list[dict[str, Any]], ascii_only: bool, secret: str) -> None:
    text = "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "d.jsonl")
        Path(path).write_text(text, encoding="utf-8")
        fast, slow = load_dataset(path), general(path)
        with held(secret):
            assert isinstance(fast.samples, LazySamples)  # the columnar reader took the file
            got = list(sample_lines(fast.samples))
            assert got == today(slow.samples)
            assert got == list(sample_lines(slow.samples))  # the per-sample template writer agrees
        assert not any(secret in line for line in got)


def test_no_sample_is_built_for_a_line_with_nothing_to_redact(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "q0", "retrieved": ["a", "b"], "relevant": ["b"]}\n'
                    '{"id": "q1", "question": "see https://u:pw@h", "relevant": {"a": 2}}\n', encoding="utf-8")
    samples = load_dataset(path).samples
    assert isinstance(samples, LazySamples)
    lines = list(sample_lines(samples))
    assert lines[0] == ('{"id": "q0", "retrieved": [{"id": "a"}, {"id": "b"}], "relevant": {"b": 1.0}, '
                        '"answerable": true}')
    assert lines[1] == ('{"id": "q1", "question": "see https://***@h", "retrieved": [], "relevant": {"a": 2.0}, '
                        '"answerable": true}')
    built = [i for i, made in enumerate(samples._made) if made is not None]  # noqa: SLF001 - what was built
    assert built == [1]  # only the line to redact built its sample


def test_a_grade_that_is_not_finite_is_written_as_json_writes_it() -> None:
    """The reader refuses such a grade; were one in the columns, its line is sample_to_row's JSON."""
    from dataclasses import replace

    from ragmeter.io.label_file import decode_label_lines
    file = decode_label_lines(b'{"id": "q", "relevant": {"a": 1, "b": 2}}\n')
    assert file is not None
    file.columns.grades[1] = float("inf")  # the columns hold the grades as one array: b's is the second
    samples = replace(file).samples()
    assert list(sample_lines(samples)) == today(samples) == [
        '{"id": "q", "retrieved": [], "relevant": {"a": 1.0, "b": Infinity}, "answerable": true}']


# -- --block: each block's dataset from the columnar reader, not fingerprinted again ------------

BLOCK_MEASURES = ["precision@3", "recall@3", "hit_rate@3", "reciprocal_rank@3", "ndcg@3", "average_precision"]
NOT_PLAIN_ROW = {"retrieved": [{"id": "a", "score": 0.5}, {"id": "b", "text": "B"}], "relevant": ["b"]}


@pytest.mark.slow
@given(rows=records(), other=st.lists(st.booleans(), max_size=6), block=st.integers(1, 5),
       chunk=st.sampled_from([1, 60, 300, 1 << 24]))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_streamed_run_files_are_the_in_memory_runs(rows: list[dict[str, Any]], other: list[bool], block: int,
                                                   chunk: int) -> None:
    """``evaluate_streaming`` with blocks of any size, chunks of any size, plain records mixed
    with records the columnar reader leaves: the summary, samples.jsonl and results.jsonl of the
    samples the general reader builds, scored one by one in memory (what the streamed path
    wrote before, block by block: ``json.dumps`` of ``sample_to_row`` and ``to_dict`` rows)."""
    import warnings
    from unittest.mock import patch

    from ragmeter.engine.evaluate import evaluate, resolve_measures
    from ragmeter.runs.blockwise import evaluate_streaming

    rows = [{**r, **NOT_PLAIN_ROW} if o else r for r, o in zip(rows, other + [False] * len(rows))]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    with tempfile.TemporaryDirectory() as tmp, patch("ragmeter.io.jsonl_blocks.CHUNK_BYTES", chunk), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = os.path.join(tmp, "d.jsonl")
        Path(path).write_text(text, encoding="utf-8")
        run = Path(tmp) / "run"
        run.mkdir()
        summary, dataset = evaluate_streaming(path, resolve_measures(BLOCK_MEASURES, 5), block=block, run_path=run,
                                              setup={})
        slow = general(path)
        whole = evaluate(slow, BLOCK_MEASURES).to_dict()
        assert dataset["fingerprint"] == slow.fingerprint
        assert dataset["testset_fingerprint"] == slow.testset_fingerprint
        metrics = whole["metrics"]
        assert summary == {name: {k: v for k, v in m.items() if k != "provenance"} for name, m in metrics.items()}
        assert (run / "samples.jsonl").read_text(encoding="utf-8") == "".join(
            json.dumps(sample_to_row(s), ensure_ascii=False) + "\n" for s in slow.samples)
        assert (run / "results.jsonl").read_text(encoding="utf-8") == "".join(
            json.dumps(r, ensure_ascii=False) + "\n" for r in whole["samples"])
        setup = json.loads((run / "setup.json").read_text(encoding="utf-8"))
        assert setup["metrics"] == {name: m["provenance"] for name, m in whole["metrics"].items()}
        assert setup["dataset"]["samples"] == len(rows)


def test_a_block_of_plain_records_is_held_as_columns(tmp_path: Path) -> None:
    """Blocks across chunk boundaries: columns (samples built on access) where every record is
    plain, samples where one is not; no block fingerprinted (the caller has the file's)."""
    from unittest.mock import patch

    from ragmeter.io.jsonl_blocks import iter_block_datasets, iter_blocks

    rows = [{"id": f"q{i}", "retrieved": ["a", "b"], "relevant": {"a": i}} for i in range(7)]
    rows[5] = {"id": "q5", **NOT_PLAIN_ROW}
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with patch("ragmeter.io.jsonl_blocks.CHUNK_BYTES", 100):
        got = list(iter_block_datasets(path, 3))
        want = [tuple(b) for b in iter_blocks(path, 3)]
    assert [tuple(d.samples) for d in got] == want
    assert [d.columns is not None for d in got] == [True, False, True]
    assert [d.fingerprint for d in got] == ["", "", ""]
    assert isinstance(got[0].samples, LazySamples) and list(got[0].columns.ids) == ["q0", "q1", "q2"]  # type: ignore[union-attr]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(samples=label_samples(SECRET), k=st.sampled_from([None, 3]))
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


sample_texts = st.one_of(st.none(),
                         st.sampled_from(["", "plain", 'q "é" \\ \n\t\x01', "see http://u:pw@host/x", SECRET]),
                         st.text(max_size=8))


@st.composite
def any_samples(draw: Any) -> list[Sample]:
    out = []
    for i in range(draw(st.integers(0, 6))):
        chunk_ids = draw(st.lists(st.sampled_from(["a", "b", "é\"c", SECRET]), max_size=3, unique=True))
        scored = draw(st.booleans())
        chunks = tuple(Chunk(c, score=draw(st.floats(allow_nan=False)) if scored else None,
                             text=draw(sample_texts) if scored else None) for c in chunk_ids)
        grade = st.one_of(st.sampled_from([0.0, 1.0, -0.0, 2.5, 1e300]), st.integers(-1, 3))
        out.append(Sample(draw(st.sampled_from([f"q{i}", f"q{i} {SECRET}", f"q{i}\u2028"])),
                          question=draw(sample_texts),
                          retrieved=chunks, relevance=draw(st.dictionaries(st.sampled_from(["a", "x", "ü"]), grade,
                                                                           max_size=3)),
                          answer=draw(sample_texts), reference=draw(sample_texts), answerable=draw(st.booleans()),
                          context=draw(st.one_of(st.none(), st.just(("a",)))),
                          metadata=draw(st.sampled_from([{}, {"k": 1}]))))
    return out


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
@settings(max_examples=150, deadline=None)
@given(samples=any_samples())
def test_sample_lines_are_the_redacted_rows(samples: list[Sample]) -> None:
    """samples.jsonl from the template: the lines of the redacted sample_to_row rows, byte for byte."""
    with patched_env("FASTSCORE_API_KEY", SECRET):
        expected = list(redacted_json_lines(sample_to_row(s) for s in samples))
        assert list(sample_lines(samples)) == expected
    assert not any(SECRET in line or "u:pw@" in line for line in expected)


json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.integers(),
                                     st.text(alphabet=st.sampled_from('ab@:/"\\\nx-'), max_size=12),
                                     st.sampled_from(["http://u:p@host/v1", "key sk-secret\"99 here", "tok-abcdefgh"])),
                           lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.text(alphabet="ab@k", max_size=3), inner,
                                                                   max_size=3)), max_leaves=8)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning", "ignore::RuntimeWarning")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(rows=[{"id": 'key sk-secret"99 here'}], secret='sk-secret"99')  # written escaped in the text
@example(rows=[{"id": ["http://u:p@host/v1"]}], secret=None)
@given(rows=st.lists(st.dictionaries(st.sampled_from(["id", "metrics", "x@y"]), json_values, max_size=3), max_size=4),
       secret=st.sampled_from([None, "tok-abcdefgh", 'sk-secret"99']))
def test_run_file_lines_are_the_redacted_rows_json(monkeypatch, rows, secret):
    """The run directory's JSONL lines, written from each row's text when nothing in it can be
    redacted, are the lines of the rows redacted value by value."""
    from ragmeter.core.secrets import redact_value, redacted_json_lines

    monkeypatch.delenv("BENCH_API_KEY", raising=False)
    if secret:
        monkeypatch.setenv("BENCH_API_KEY", secret)
    assert list(redacted_json_lines(rows)) == [json.dumps(redact_value(r), ensure_ascii=False) for r in rows]
