"""``ragmeter.io.jsonl``: JSON Lines reader: one JSON object per line; blank lines are allowed, nothing
else is skipped."""

from __future__ import annotations

import json

import pytest

from ragmeter import InvalidInputError, load_dataset
from ragmeter.io.jsonl_blocks import iter_blocks
from tests.io.test_dataset import write

ROWS = [{"id": "q1", "retrieved": ["a", "b", "c"], "relevant": ["b"]},
        {"id": "q2", "retrieved": ["d"], "relevant": ["d", "e"]}]


@pytest.mark.parametrize("name,text,words", [
    ("deep.jsonl", '{"id": "q1", "metadata": ' + "[" * 100_000 + "\n", "JSON nested too deeply"),
    ("digits.jsonl", '{"id": "q1", "metadata": {"n": ' + "9" * 5000 + "}}\n", "a number is too long to read"),
    ("surrogate.jsonl", '{"id": "q1", "question": "\\ud800 alone"}\n', "lone UTF-16 surrogate"),
    ("grade.jsonl", '{"id": "q1", "relevant": {"a": ' + "9" * 400 + "}}\n", "an integer of 400 digits"),
    ("inf.jsonl", '{"id": "q1", "relevant": {"a": 1e999}}\n', "must be a finite number, got inf"),
    ("score.jsonl", '{"id": "q1", "retrieved": [{"id": "a", "score": ' + "9" * 400 + "}]}\n", "an integer of 400"),
])
def test_pathological_json_is_a_located_error_in_both_readers(tmp_path, name, text, words):
    p = write(tmp_path, name, text)
    with pytest.raises(InvalidInputError, match=rf"{name}, line 1.*{words}"):
        load_dataset(p)
    with pytest.raises(InvalidInputError, match=rf"{name}, line 1.*{words}"):
        list(iter_blocks(p, 10))


def test_a_surrogate_pair_is_text():
    # the escape check must not refuse a complete pair (U+1F600)
    from ragmeter.io.json_text import decode_json

    assert decode_json('{"q": "\\ud83d\\ude00"}', file="f", line=1) == {"q": "\U0001F600"}


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085", "\x0c", "\x1c", "\x0b"])
def test_both_jsonl_readers_split_on_newline_only(tmp_path, separator):
    rows = [{"id": "q1", "question": f"one{separator}two", "retrieved": ["a"]}, {"id": "q2", "retrieved": ["b"]}]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    p = write(tmp_path, "d.jsonl", "\ufeff" + text.replace("\n", "\r\n", 1))
    in_memory = load_dataset(p).samples
    streamed = [s for block in iter_blocks(p, 1) for s in block]
    assert [s.id for s in in_memory] == [s.id for s in streamed] == ["q1", "q2"]
    assert in_memory[0].question == streamed[0].question == f"one{separator}two"


def test_bom_is_dropped_by_both_readers_only_at_the_start(tmp_path):
    p = write(tmp_path, "d.jsonl", "\ufeff" + json.dumps(ROWS[0]) + "\n\ufeff" + json.dumps(ROWS[1]) + "\n")
    for read in (load_dataset, lambda q: list(iter_blocks(q, 10))):
        with pytest.raises(InvalidInputError, match=r"d.jsonl, line 2: not valid JSON"):
            read(p)
