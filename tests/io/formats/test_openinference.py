"""``io/formats/openinference.py``: a file of OpenInference spans, one request per span, read as
``watch`` reads a log of them (both through ``io/traces.span_request``), attributes flattened,
nested or as OTLP's list."""

from __future__ import annotations

import json

import pytest

import ragmeter
from ragmeter.core.errors import InvalidInputError
from ragmeter.io.formats.base import content_id
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
    path.write_text(json.dumps({"attributes": {"input.value": "q"}}) + "\n")
    with pytest.raises(InvalidInputError, match=r'line 1.*field "span_id": a span needs a span_id'):
        ragmeter.load_dataset(str(path))


def test_otlp_attribute_values_are_decoded_whole_and_documents_read_as_traces_read_them(tmp_path):
    """The attribute list's values decoded by the OTLP decoder (an intValue an integer, not its
    text); a document's score kept, one without an id given its content's id."""
    span = {"span_id": 7, "attributes": [
        {"key": "input.value", "value": {"stringValue": "q?"}},
        {"key": "retrieval.documents.0.document.id", "value": {"intValue": "12"}},
        {"key": "retrieval.documents.0.document.score", "value": {"doubleValue": 0.75}},
        {"key": "retrieval.documents.1.document.content", "value": {"stringValue": "no id"}}]}
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(span) + "\n")
    (s,) = ragmeter.load_dataset(str(path)).samples
    assert s.id == "7" and s.retrieved_ids == ("12", content_id("no id"))
    assert [c.score for c in s.retrieved] == [0.75, None]
    assert parse(json.dumps(span).encode()).sample.retrieved == s.retrieved  # watch reads it the same
