"""Wrong-shaped input: a record with nothing to score and only fields no reader takes is an
error naming the file, the line, the fields found and the formats tried; never one empty
sample with exit 0."""

from __future__ import annotations

import json

import pytest

import ragmeter
from ragmeter.core.errors import InvalidInputError
from ragmeter.io.rows import FORMATS_TRIED


@pytest.mark.parametrize("record, fields", [
    ({"foo": {"bar": 1}}, '"foo"'),
    ({"qrels": {"q1": {"d1": 1}}}, '"qrels"'),
    ({"id": "q1", "query-id": "q1", "corpus-id": "d1", "score": 1}, '"id", "query-id", "corpus-id", "score"'),
    ({}, "none"),
])
def test_a_record_with_nothing_to_score_names_its_fields_and_the_formats(tmp_path, record, fields):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"id": "ok", "question": "fine?"}) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(InvalidInputError) as info:
        ragmeter.load_dataset(path)
    text = str(info.value)
    assert text.startswith(f"{path}, line 2")
    assert f"no question, answer or retrieved chunks (fields found: {fields})" in text
    for fmt in FORMATS_TRIED:
        assert fmt in text
    assert "MTRAG" in text and "RAGChecker" in text and "Ragas" in text and "DeepEval" in text


def test_the_cli_stops_with_exit_2(cli, tmp_path):
    """Exit 0 with one empty sample, everything 'not computed', before."""
    path = tmp_path / "qrels.json"
    path.write_text(json.dumps({"qrels": {"q1": {"d1": 1}}}, indent=2))
    out = cli("eval", path, "--no-save")
    assert out.exit_code == 2
    assert out.stderr.startswith(f'error: {path}, line 1: no question, answer or retrieved chunks (fields found: '
                                 '"qrels")')


def test_ragmeters_own_fields_alone_stay_an_empty_sample():
    """{"id": ...} alone (or with answerable) is deliberate: kept, as the columnar reader keeps it."""
    (s,) = ragmeter.load_dataset([{"id": "q1", "answerable": False}]).samples
    assert s.id == "q1" and s.answerable is False
