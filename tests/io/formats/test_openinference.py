"""``io/formats/openinference.py``: the one reader of OpenInference spans, for ``eval`` (a file of
spans), ``watch`` (a log of spans) and the action grader, flattened or OTLP's attribute list."""

from __future__ import annotations

import json

import pytest

import ragmeter
from ragmeter.core.errors import InvalidInputError
from ragmeter.io.formats import openinference
from ragmeter.live.source import LoggedRequest, parse

FLAT = {"span_id": "s1", "name": "rag", "context": {"trace_id": "t1", "span_id": "s1"},
        "attributes": {"input.value": "How long is the R2 warranty?", "output.value": "24 months.",
                       "retrieval.documents.1.document.id": "w1", "retrieval.documents.1.document.content": "R1: 12",
                       "retrieval.documents.0.document.id": "w2", "retrieval.documents.0.document.content": "R2: 24"}}


def _otlp(span: dict) -> dict:
    return {**span, "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in span["attributes"].items()]}


def test_eval_reads_a_file_of_spans_flattened_or_otlp(tmp_path):
    path = tmp_path / "spans.jsonl"
    second = {**_otlp(FLAT), "span_id": "s2", "context": {"trace_id": "t2", "span_id": "s2"}}
    path.write_text(json.dumps(FLAT) + "\n" + json.dumps(second) + "\n")
    samples = ragmeter.load_dataset(str(path)).samples
    assert [s.id for s in samples] == ["s1", "s2"]
    for s in samples:
        assert (s.question, s.answer) == ("How long is the R2 warranty?", "24 months.")
        assert s.retrieved_ids == ("w2", "w1") and s.retrieved[0].text == "R2: 24"  # in the order of <i>


def test_watch_reads_the_same_span_either_way():
    flat, otlp = parse(json.dumps(FLAT).encode()), parse(json.dumps(_otlp(FLAT)).encode())
    assert isinstance(flat, LoggedRequest) and isinstance(otlp, LoggedRequest)
    assert flat.sample == otlp.sample and flat.id == "s1"


def test_a_span_of_the_wrong_shape_is_a_located_error_in_eval(tmp_path):
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps({**FLAT, "attributes": {**FLAT["attributes"], "output.value": 3}}) + "\n")
    with pytest.raises(InvalidInputError, match=r'line 1.*field "attributes": output.value must be a string, got int'):
        ragmeter.load_dataset(str(path))
    with pytest.raises(InvalidInputError, match="a span needs a span_id"):
        openinference.request({"attributes": {"input.value": "q"}})


def test_attributes_and_start_time():
    assert openinference.attributes({"attributes": [{"key": "a", "value": {"intValue": "3"}}, {"nokey": 1}]}) \
        == {"a": "3"}
    assert openinference.attributes({"attributes": "nonsense"}) == {}
    assert openinference.start_time({"startTimeUnixNano": "1700000000000000000"}) == 1.7e9
    assert openinference.start_time({"start_time": 1.7e18}) == 1.7e9 and openinference.start_time({}) == 0.0
    assert openinference.start_time({"start_time": "2023-11-14T22:13:20Z"}) == 1.7e9
