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

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ragmeter.core.secrets import redacted_json_lines
from ragmeter.io.dataset import load_dataset
from ragmeter.io.label_file import LazySamples
from ragmeter.io.writer import sample_to_row
from ragmeter.runs.result_lines import sample_lines
from tests.test_fast_load import general, grades, records, texts

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
