"""``actions/readers.py``: tool calls read from OpenInference spans through the one span reader
(``io/otlp`` and ``io/openinference``); the three formats side by side are in ``test_grade.py``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.actions import read_spans_file, read_tool_calls
from ragmeter.core.errors import InvalidInputError
from tests.hostile import FUZZ, VALUE


def _tool_span(i: int, name: str, **extra: object) -> dict:
    return {"name": name, "context": {"trace_id": "t1", "span_id": f"s{i}"}, **extra,
            "attributes": {"openinference.span.kind": "TOOL", "tool.name": name, "input.value": "{}"}}


def test_spans_are_ordered_by_their_start_in_any_unit():
    """An ISO time, OTLP nanoseconds and Phoenix milliseconds put on one clock."""
    spans = [_tool_span(0, "third", start_time="2023-11-14T22:13:22Z"),
             _tool_span(1, "first", startTimeUnixNano="1700000000000000000"),
             _tool_span(2, "second", start_time=1_700_000_001_000)]
    calls, _ = read_tool_calls(spans)
    assert [c.name for c in calls] == ["first", "second", "third"]


def test_otlp_attribute_values_are_decoded_whole():
    """A tool-call id sent as an intValue, a declared tool's schema in a kvlist, read as values."""
    attrs = {"openinference.span.kind": {"stringValue": "LLM"},
             "llm.output_messages.0.message.tool_calls.0.tool_call.id": {"intValue": "42"},
             "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": {"stringValue": "lookup"},
             "llm.tools.0.tool": {"kvlistValue": {"values": [{"key": "name", "value": {"stringValue": "lookup"}}]}}}
    span = {"name": "llm", "attributes": [{"key": k, "value": v} for k, v in attrs.items()]}
    calls, tools = read_tool_calls([span])
    assert [(c.name, c.id) for c in calls] == [("lookup", "42")]
    assert tools is not None and [t.name for t in tools] == ["lookup"]


def test_a_message_index_that_is_no_number_is_not_a_crash():
    span = {"name": "llm", "attributes": {"openinference.span.kind": "LLM",
                                          "llm.output_messages.x.message.tool_calls.0.tool_call.function.name": "a",
                                          "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "b"}}
    calls, _ = read_tool_calls([span])
    assert [c.name for c in calls] == ["b"]


@pytest.mark.parametrize("span,words", [
    ({"name": "t", "attributes": [{"key": "tool.name", "value": {"stringValue": 3}}]},
     "span 1: attribute 'tool.name': stringValue must be a string"),
    ({"name": "t", "start_time": "yesterday", "attributes": {}}, "span 1: start_time must be an ISO 8601 time"),
    ("not a span", "span 1 is not an object"),
])
def test_a_span_that_cannot_be_read_is_a_located_error(span, words):
    with pytest.raises(InvalidInputError, match=words) as exc:
        read_tool_calls({"spans": [span]})
    assert exc.value.field == "tool_calls"


def test_a_spans_file_names_the_line_that_cannot_be_read(tmp_path):
    path = tmp_path / "spans.jsonl"
    good = _tool_span(0, "lookup", startTimeUnixNano="1")
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "startTimeUnixNano": "soon"}) + "\n")
    with pytest.raises(InvalidInputError, match="startTimeUnixNano must be nanoseconds") as exc:
        read_spans_file(path)
    assert (exc.value.file, exc.value.line) == (str(path), 2)


@FUZZ
@given(st.lists(st.dictionaries(st.sampled_from(["name", "context", "start_time", "startTimeUnixNano", "attributes"]),
                                VALUE, max_size=4), max_size=3),
       st.dictionaries(st.sampled_from(["openinference.span.kind", "tool.name", "input.value", "output.value",
                                        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
                                        "llm.output_messages.0.message.tool_calls.x.tool_call.id",
                                        "llm.input_messages.0.message.tool_call_id", "llm.tools.0.tool.json_schema"]),
                       VALUE, max_size=5))
def test_hostile_spans_give_calls_or_a_typed_error(spans, attrs):
    spans = [*spans, {"name": "s", "attributes": {"openinference.span.kind": "LLM", **attrs}}]
    try:
        calls, _ = read_tool_calls({"spans": spans})
    except InvalidInputError as exc:
        assert exc.field == "tool_calls"
    else:
        assert all(isinstance(c.name, str) for c in calls)
