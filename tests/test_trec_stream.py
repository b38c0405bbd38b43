"""Streaming TREC evaluation (topic partitions) gives the in-memory numbers, bit for bit."""

from __future__ import annotations

import random

import pytest

from ragmeter.trec import evaluate_trec
from ragmeter.trec.partitioned import parts_needed

from .conftest import TREC_REF
from .test_trec_reference import CASES

ALL = ["all_trec", "mrr@10"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}:{c[1]}:{c[2]}")
def test_partitions_reproduce_the_reference_cases(case):
    _, qrels, results, measures, opts = case
    opts = {k: v for k, v in opts.items() if k != "q"}
    whole = evaluate_trec(TREC_REF / qrels, TREC_REF / results, measures, **opts)
    limit = 0.02  # MB: forces several partitions on these small files
    assert parts_needed(TREC_REF / results, limit) > 1
    parts = evaluate_trec(TREC_REF / qrels, TREC_REF / results, measures, memory_limit_mb=limit, **opts)
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
    parts = evaluate_trec(qrels, run, ALL, memory_limit_mb=0.01, **opts)
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
    parts = evaluate_trec(qrels, run, ["map", "num_ret"], memory_limit_mb=0.2)
    assert parts_needed(run, 0.2) > 1
    assert (parts.mean("map"), parts.mean("num_ret")) == (whole.mean("map"), whole.mean("num_ret"))
