"""A BEIR qrels file (query-id, corpus-id, score, after a header) given to ``ragmeter trec`` is
refused, as trec_eval refuses it, with what it is and the one-line conversion (before: "expected
4 fields" and no hint of the format). Not read silently: trec_eval's format has an iter column,
and ``ragmeter trec`` gives trec_eval's numbers for trec_eval's inputs."""

from __future__ import annotations

import subprocess
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given

from ragmeter.core.errors import RagmeterError
from ragmeter.trec.errors import EXIT_TOPIC, TrecInputError
from ragmeter.trec.reader import read_qrels
from tests.hostile import FUZZ, only_typed_errors, trec_file
from tests.io.test_dataset import write


def test_a_beir_qrels_file_is_named_with_the_conversion(tmp_path):
    dev = tmp_path / "dev.tsv"
    dev.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n")
    with pytest.raises(TrecInputError) as info:
        read_qrels(dev)
    text = str(info.value)
    assert text.startswith(f"{dev}, line 1: expected 4 fields (qid iter docno rel), got 3 (a BEIR qrels file: "
                           "query-id, corpus-id, score, after a header line)")
    fix = f"awk 'NR > 1 {{print $1, 0, $2, $3}}' {dev} > qrels.txt"
    assert fix in text
    subprocess.run(fix, shell=True, check=True, cwd=tmp_path)  # the fix, as given, gives a readable qrels file
    qrels = read_qrels(tmp_path / "qrels.txt")
    assert qrels.table.num_rows == 2


def test_three_fields_without_the_header_get_the_hint_too(tmp_path):
    bare = tmp_path / "q.tsv"
    bare.write_text("q1\td1\t1\n")
    with pytest.raises(TrecInputError, match=r"got 3 \(qid docno rel without the iter column"):
        read_qrels(bare)


@FUZZ
@given(trec_file(4), trec_file(6))
def test_trec_qrels_and_run(qrels, run):
    from ragmeter.trec import evaluate_trec
    from ragmeter.trec.reader import read_qrels, read_run

    only_typed_errors(qrels, "qrels", read_qrels)
    only_typed_errors(run, "run", read_run)
    with tempfile.TemporaryDirectory() as d:
        q, r = Path(d, "qrels"), Path(d, "run")
        q.write_bytes(qrels)
        r.write_bytes(run)
        try:
            evaluate_trec(str(q), str(r), ["P.5,1000000000", "map", "ndcg_cut.10", "recall.3"])
        except RagmeterError:
            pass


def test_trec_huge_cut_off_allocates_nothing(tmp_path):
    from ragmeter.trec import evaluate_trec

    qrels = write(tmp_path, "q", "q1 0 d1 1\nq1 0 d2 0\n")
    run = write(tmp_path, "r", "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d1 1 1 r\nq2 Q0 d9 2 0.5 r\n")
    tracemalloc.start()
    result = evaluate_trec(str(qrels), str(run), ["P.1000000000", "map_cut.1000000000", "success.1000000000",
                                                  "recall.1000000000", "relative_P.1000000000"])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 * 2 ** 20, peak
    d = result.per_topic
    assert d["P_1000000000"].tolist() == [1 / 1_000_000_000]
    assert d["map_cut_1000000000"].tolist() == [1.0] and d["relative_P_1000000000"].tolist() == [1.0]


@pytest.mark.parametrize("grade,exit_code", [("9" * 25, EXIT_TOPIC), ("9" * 5000, EXIT_TOPIC)])
def test_trec_grade_past_64_bits_exits_as_trec_eval(tmp_path, grade, exit_code):
    # trec_eval 10.0: "Can't calculate measure", exit 4 (a grade below -2**63 saturates, as atol does)
    qrels = write(tmp_path, "q", f"q1 0 d1 {grade}\n")
    with pytest.raises(TrecInputError, match=r"q, line 1, field \"rel\": relevance grade of \d+ digits") as info:
        read_qrels(str(qrels))
    assert info.value.exit_code == exit_code
    assert read_qrels(str(write(tmp_path, "n", f"q1 0 d1 -{'9' * 30}\n"))).table["rel"].to_pylist() == [-2 ** 63]
