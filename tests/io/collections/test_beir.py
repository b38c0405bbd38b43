"""``io/collections/beir.py``: BEIR folders as BEIR's loader reads them, and what it refuses."""

from __future__ import annotations

import pytest

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.collections.beir import load_beir
from ragmeter.io.collections.collection import write_collection
from tests.io.collections.test_collection import beir, beir_dir, nothing_written  # noqa: F401  (a fixture)


def test_beir_unknown_split_names_the_ones_there(beir_dir):  # noqa: F811
    with pytest.raises(InvalidInputError, match="choose one of test, train"):
        load_beir(beir_dir, "dev")


def test_beir_qrels_without_a_header_keep_their_first_judgment(beir_dir):  # noqa: F811
    (beir_dir / "qrels" / "test.tsv").write_text("q1\td1\t1\nq2\td2\t1\n", encoding="utf-8")
    assert load_beir(beir_dir).qrels == {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}


DEEP = '{"_id": "d9", "text": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize("where", ["corpus", "queries"])
def test_a_beir_line_nested_100000_deep_is_a_located_error(tmp_path, where):
    rows = [{"_id": "d1", "title": "", "text": "a"}, DEEP] if where == "corpus" else \
        [{"_id": "q1", "text": "q"}, DEEP.replace("d9", "q9")]
    root = beir(tmp_path / "b", **{where: rows})
    out = tmp_path / "out"
    with pytest.raises(InvalidInputError, match=rf"{where}.jsonl, line 2: not valid JSON \(nested too deep"):
        write_collection(load_beir(root), out)
    assert nothing_written(out)


def test_a_duplicate_beir_document_id_is_refused_naming_both_lines(tmp_path):
    root = beir(tmp_path / "b", corpus=[{"_id": "d1", "title": "", "text": "a"},
                                        {"_id": "d2", "title": "", "text": "b"},
                                        {"_id": "d1", "title": "", "text": "c"}])
    out = tmp_path / "out"
    with pytest.raises(InvalidInputError, match=r"corpus.jsonl, line 3 .*document id 'd1' appears twice "
                                                r"\(lines 1 and 3\)"):
        write_collection(load_beir(root), out)
    assert nothing_written(out)
