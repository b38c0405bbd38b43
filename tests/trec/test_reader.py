"""A BEIR qrels file (query-id, corpus-id, score, after a header) given to ``ragmeter trec`` is
refused, as trec_eval refuses it, with what it is and the one-line conversion (before: "expected
4 fields" and no hint of the format). Not read silently: trec_eval's format has an iter column,
and ``ragmeter trec`` gives trec_eval's numbers for trec_eval's inputs."""

from __future__ import annotations

import subprocess

import pytest

from ragmeter.trec.errors import TrecInputError
from ragmeter.trec.reader import read_qrels


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
