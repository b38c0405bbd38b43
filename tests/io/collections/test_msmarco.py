"""``io/collections/msmarco.py``: MS MARCO's TSV files, passages and documents told apart by their shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.collections.collection import write_collection
from ragmeter.io.collections.msmarco import load_msmarco


def test_msmarco_tsvs(tmp_path, cli):
    (tmp_path / "collection.tsv").write_text("0\tThe R1 has a 12-month warranty.\n1\tThe R2 has 24 months.\n"
                                             "2\tReturns within 30 days.\n3\tDead on arrival units are exchanged.\n")
    (tmp_path / "queries.dev.tsv").write_text("10\tr1 warranty\n11\treturn window\n12\tunjudged query\n")
    (tmp_path / "qrels.dev.tsv").write_text("10\t0\t0\t1\n11\t0\t2\t1\n")
    (tmp_path / "run.dev.tsv").write_text("10\t1\t1\n10\t0\t2\n11\t3\t3\n11\t2\t1\n11\t1\t2\n12\t0\t1\n")
    out = tmp_path / "o"
    r = cli("import", "msmarco", "--collection", tmp_path / "collection.tsv", "--queries", tmp_path / "queries.dev.tsv",
            "--qrels", tmp_path / "qrels.dev.tsv", "--run", tmp_path / "run.dev.tsv", "--out", out)
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in (out / "dataset.jsonl").read_text().splitlines()]
    assert rows == [{"id": "10", "question": "r1 warranty", "relevant": {"0": 1.0}, "retrieved": ["1", "0"]},
                    {"id": "11", "question": "return window", "relevant": {"2": 1.0}, "retrieved": ["2", "1", "3"]}]
    ev = cli("eval", out / "dataset.jsonl", "-m", "mrr@10", "--format", "json", "--no-save")
    assert json.loads(ev.output)["metrics"]["reciprocal_rank@10"]["mean"] == pytest.approx((1 / 2 + 1 / 1) / 2)
    assert len((out / "corpus.jsonl").read_text().splitlines()) == 4


def marco(tmp_path: Path, collection: str) -> Path:
    (tmp_path / "collection.tsv").write_text(collection)
    (tmp_path / "queries.tsv").write_text("10\tr1 warranty\n")
    (tmp_path / "qrels.tsv").write_text("10\t0\t0\t1\n")
    out = tmp_path / "out"
    write_collection(load_msmarco(tmp_path / "collection.tsv", tmp_path / "queries.tsv", tmp_path / "qrels.tsv"), out)
    return out / "corpus.jsonl"


def test_msmarco_passages_holding_tabs_keep_their_text(tmp_path):
    corpus = marco(tmp_path, "0\tThe R1\thas a\t12-month warranty.\n1\tNo tabs here.\n2\ta\tb\n")
    assert [json.loads(x) for x in corpus.read_text().splitlines()] == [
        {"id": "0", "text": "The R1\thas a\t12-month warranty."}, {"id": "1", "text": "No tabs here."},
        {"id": "2", "text": "a\tb"}]


def test_the_msmarco_document_collection_is_told_by_its_shape(tmp_path):
    corpus = marco(tmp_path, "D0\thttps://x.example/a\tWarranty\tThe R1 has\ta 12-month warranty.\n"
                             "D1\thttp://x.example/b\tReturns\t30 days.\n")
    assert [json.loads(x) for x in corpus.read_text().splitlines()] == [
        {"id": "D0", "text": "Warranty The R1 has\ta 12-month warranty."}, {"id": "D1", "text": "Returns 30 days."}]
    with pytest.raises(InvalidInputError, match=r"line 2: expected docid<TAB>url<TAB>title<TAB>body"):
        (tmp_path / "again").mkdir()
        marco(tmp_path / "again", "D0\thttps://x.example/a\tT\tbody\nD1\tno url here\n")
