"""Streaming TREC evaluation (topic partitions) gives the in-memory numbers, bit for bit."""

from __future__ import annotations

import random

import pytest

from ragmeter import InvalidParameterError
from ragmeter.trec import evaluate_trec, partitioned
from ragmeter.trec.partitioned import evaluate_trec_streaming, fits_in_memory, rss_mb
from tests.acceptance.test_trec_reference import CASES
from tests.conftest import TREC_REF

ALL = ["all_trec", "mrr@10"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}:{c[1]}:{c[2]}")
def test_partitions_reproduce_the_reference_cases(case):
    _, qrels, results, measures, opts = case
    opts = {k: v for k, v in opts.items() if k != "q"}
    whole = evaluate_trec(TREC_REF / qrels, TREC_REF / results, measures, **opts)
    parts = evaluate_trec_streaming(TREC_REF / qrels, TREC_REF / results, measures, max_part_rows=200,
                                    chunk_bytes=4096, **opts)  # several chunks and parts on these small files
    assert parts.topics == whole.topics and parts.names == whole.names
    for name in whole.names:
        assert repr(parts.mean(name)) == repr(whole.mean(name)), name  # bit for bit (NaN too)
        if name in whole.per_topic:
            assert repr(parts.per_topic[name].tolist()) == repr(whole.per_topic[name].tolist()), name


@pytest.mark.parametrize("opts", [{"skip_missing": True}, {"complete": True},
                                  {"max_docs": 7, "judged_only": True, "skip_missing": True},
                                  {"level": 2, "skip_missing": True}])
def test_partitions_on_a_shuffled_run_with_ties(tmp_path, opts):
    rnd = random.Random(3)
    qrels = tmp_path / "q"
    qrels.write_text("".join(f"t{t} 0 d{d} {rnd.choice([-1, 0, 1, 2])}\n" for t in range(30) for d in range(0, 40, 3)))
    rows = [f"t{t} Q0 d{d} 0 {rnd.choice([0.5, 1.0, rnd.random()])} r\n" for t in range(25) for d in range(40)]
    rnd.shuffle(rows)
    run = tmp_path / "r"
    run.write_text("".join(rows))
    whole = evaluate_trec(qrels, run, ALL, **opts)
    parts = evaluate_trec_streaming(qrels, run, ALL, max_part_rows=100, chunk_bytes=2048, **opts)
    assert parts.topics == whole.topics
    for name in whole.names:
        assert repr(parts.mean(name)) == repr(whole.mean(name)), name  # bit for bit (NaN too)


@pytest.mark.parametrize("after_docno,at_end", [("", " extra-field"), ("\tz", "")])
def test_a_line_the_fast_reader_cannot_take_late_in_the_file_is_not_written_twice(tmp_path, after_docno, at_end):
    """Arrow's streaming reader fails on a later block (a seventh field; a tab among spaces,
    which trec_eval splits on): the partition starts again with the exact reader instead of
    appending the same rows a second time (found as 'appears twice' before)."""
    qrels = tmp_path / "q"
    qrels.write_text("".join(f"q{t} 0 d{d} {d % 2}\n" for t in range(50) for d in range(5)))
    run = tmp_path / "r"
    def line(t, d):
        mid, end = (after_docno, at_end) if (t, d) == (45, 3) else ("", "")
        return f"q{t} Q0 d{d}{mid} {d + 1} {1000 - d} r{end}\n"

    run.write_text("".join(line(t, d) for t in range(50) for d in range(200)))
    whole = evaluate_trec(qrels, run, ["map", "num_ret"])
    parts = evaluate_trec_streaming(qrels, run, ["map", "num_ret"], max_part_rows=2000, chunk_bytes=1 << 14)
    assert (parts.mean("map"), parts.mean("num_ret")) == (whole.mean("map"), whole.mean("num_ret"))


def test_a_bucket_too_large_for_its_part_is_split_again(tmp_path, monkeypatch):
    """Fewer buckets than the parts need (as when the first estimate was too low): the streamed
    path splits a bucket by a finer topic hash and still gives the in-memory numbers."""
    rnd = random.Random(5)
    qrels = tmp_path / "q"
    qrels.write_text("".join(f"t{t} 0 d{d} {rnd.choice([0, 1, 2])}\n" for t in range(40) for d in range(0, 30, 2)))
    run = tmp_path / "r"
    run.write_text("".join(f"t{t} Q0 d{d} 0 {rnd.random()} r\n" for t in range(40) for d in range(30)))
    splits = []
    original = partitioned._split_bucket
    monkeypatch.setattr(partitioned, "MAX_BUCKETS", 2)
    monkeypatch.setattr(partitioned, "_split_bucket", lambda *a: splits.append(a[1]) or original(*a))
    whole = evaluate_trec(qrels, run, ALL)
    parts = evaluate_trec_streaming(qrels, run, ALL, max_part_rows=100)
    assert splits and parts.topics == whole.topics and parts.per_topic.keys() == whole.per_topic.keys()
    for name in whole.names:
        assert repr(parts.mean(name)) == repr(whole.mean(name)), name
    for name, values in whole.per_topic.items():
        assert repr(parts.per_topic[name].tolist()) == repr(values.tolist()), name


def test_a_memory_limit_decides_the_path_and_a_hopeless_one_is_refused(tmp_path):
    run = TREC_REF / "results.test"
    assert fits_in_memory(run, rss_mb() + 200) and not fits_in_memory(run, rss_mb())
    whole = evaluate_trec(TREC_REF / "qrels.test", run, ["all_trec"])
    limited = evaluate_trec(TREC_REF / "qrels.test", run, ["all_trec"], memory_limit_mb=rss_mb() + 200)
    assert [limited.mean(n) for n in whole.names] == [whole.mean(n) for n in whole.names]
    with pytest.raises(InvalidParameterError, match="already holds"):
        evaluate_trec(TREC_REF / "qrels.test", run, ["map"], memory_limit_mb=10)
