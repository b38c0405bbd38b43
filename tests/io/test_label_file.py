"""The columnar reader's two ways of reading a ranked list (io/label_file.py): from the file's
bytes (no backslash in the file: counted, coded from the bytes) and as strings (msgspec's typed
decode), chunk by chunk. Both give the general reader's samples and fingerprints; the bytes
path leaves every list it cannot read exactly to the typed one."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragmeter.io.label_file as label_file
from ragmeter.io.label_file import decode_label_lines, read_label_file
from tests.test_fast_load import assert_same_as_general, records, write


def summary(file: Any) -> tuple:
    c = file.columns
    return (list(c.ids), list(c.retrieved), list(c.relevance), file.questions, file.answers, file.references,
            file.fingerprint, file.testset_fingerprint)


@given(rows=records(), chunk=st.sampled_from([1, 40, 300, 1 << 22]), compact=st.booleans())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_chunk_size_and_either_path_read_the_same(rows: list[dict[str, Any]], chunk: int, compact: bool) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    raw = "".join(json.dumps(r, ensure_ascii=False, separators=separators) + "\n" for r in rows).encode()
    whole = decode_label_lines(raw)
    assert whole is not None
    with patch.object(label_file, "CHUNK_BYTES", chunk):
        assert summary(decode_label_lines(raw)) == summary(whole)
    with patch.object(label_file, "_ranked_from_bytes", lambda *a: label_file._TYPED):
        assert summary(decode_label_lines(raw)) == summary(whole)


LEFT_TO_STRINGS = {  # ranked lists the bytes path does not read: the typed decoder decides
    "comma in an id": '["a,b", "c"]',
    "bracket in an id": '["[x]"]',
    "brace in an id": '["{x}"]',
    "a number among the ids": '["a", 1]',
    "a number alone": "[1]",
    "null in the list": '["a", null]',
    "a nested list": '[["a"]]',
    "an object": '[{"id": "a", "score": 0.5}]',
    "spaced empty list": "[ ]",
    "a string": '"a"',
    "true": "true",
    "an empty object": "{}",
}
READ_FROM_BYTES = {  # whitespace anywhere JSON allows it
    "spaced": '[ "a" , "b" ]',
    "tabs and returns": '[\t"a",\r"b"\t]',
    "compact": '["a","b"]',
    "spaces inside ids": '["a b", " c"]',
    "empty": "[]",
    "null": "null",
}


def _file(tmp_path: Path, ranked: str) -> str:
    text = f'{{"id": "q1", "retrieved": {ranked}, "relevant": ["a"]}}\n{{"id": "q2", "retrieved": ["b"]}}\n'
    return write(str(tmp_path), text)


@pytest.mark.parametrize("name", sorted(LEFT_TO_STRINGS))
def test_lists_the_bytes_path_leaves_to_the_typed_decoder(name: str, tmp_path: Path) -> None:
    path = _file(tmp_path, LEFT_TO_STRINGS[name])
    seen = []
    real = label_file._ranked_from_bytes

    def spy(*args: Any) -> Any:
        seen.append(got := real(*args))
        return got

    with patch.object(label_file, "_ranked_from_bytes", spy):
        taken = read_label_file(path)
    assert seen == [label_file._TYPED]
    if taken is not None:  # an array of strings after all (commas, brackets inside ids)
        assert_same_as_general(path)
    else:
        from ragmeter.io.dataset import load_dataset
        from tests.test_fast_load import general, outcome

        assert outcome(load_dataset, path) == outcome(general, path)


@pytest.mark.parametrize("name", sorted(READ_FROM_BYTES))
def test_lists_read_from_their_bytes(name: str, tmp_path: Path) -> None:
    path = _file(tmp_path, READ_FROM_BYTES[name])
    with patch.object(label_file, "_DECODER", None):  # the typed decoder is never asked
        assert read_label_file(path) is not None
    assert_same_as_general(path)


def test_a_file_over_many_chunks_reads_as_one(tmp_path: Path) -> None:
    rows = [{"id": f"q{i}", "question": f"question {i}", "retrieved": [f"d{(i * 7 + j) % 50}" for j in range(5)],
             "relevant": {f"d{i % 50}": 1 + i % 3}} for i in range(500)]
    with tempfile.TemporaryDirectory() as tmp, patch.object(label_file, "CHUNK_BYTES", 1000):
        path = write(tmp, "".join(json.dumps(r) + "\n" for r in rows))
        data = assert_same_as_general(path)
        assert len(data.columns.vocabulary) == 50  # one vocabulary for the file
        duplicate = write(tmp, "".join(json.dumps(r) + "\n" for r in rows + rows[:1]), name="dup.jsonl")
        assert read_label_file(duplicate) is None  # an id in two chunks: the general reader names it
