"""The columnar reader's two ways of reading a ranked list (io/label_file.py): from the file's
bytes (no backslash in the file: counted, coded from the bytes) and as strings (msgspec's typed
decode), chunk by chunk. Both give the general reader's samples and fingerprints; the bytes
path leaves every list it cannot read exactly to the typed one."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragmeter
import ragmeter.io.label_file as label_file
from ragmeter.core.columns import LabelColumns
from ragmeter.core.errors import InvalidInputError
from ragmeter.io.dataset import Dataset, load_dataset
from ragmeter.io.label_file import LazySamples, decode_label_lines, read_label_file

BENCH_LIKE = ('{"id": "q0", "question": "question 0", "retrieved": ["d1", "d2", "d3"], '
              '"relevant": {"d3": 1, "d9": 2}}\n'
              '{"id": "q1", "question": "question 1", "retrieved": ["d2"], "relevant": ["d2"]}\n')


def general(path: str) -> Dataset:
    """What ``load_dataset`` gives with the columnar reader turned off (the path every file took
    before it)."""
    with patch("ragmeter.io.dataset.read_label_file", lambda _: None):
        data = load_dataset(path)
    assert data.columns is None and isinstance(data.samples, tuple)
    return data


def outcome(read: Any, path: str) -> tuple[str, Any]:
    try:
        data = read(path)
    except InvalidInputError as exc:
        return "error", str(exc)
    return "ok", (tuple(data.samples), data.fingerprint, data.testset_fingerprint)


def write(tmp: str, text: str | bytes, name: str = "d.jsonl") -> str:
    path = os.path.join(tmp, name)
    Path(path).write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def assert_same_as_general(path: str) -> Dataset:
    fast = load_dataset(path)
    slow = general(path)
    assert fast.columns is not None and isinstance(fast.samples, LazySamples)
    assert (fast.fingerprint, fast.testset_fingerprint) == (slow.fingerprint, slow.testset_fingerprint)
    assert len(fast.samples) == len(slow.samples)
    assert tuple(fast.samples) == slow.samples
    expected = LabelColumns.from_samples(slow.samples)
    assert list(fast.columns.ids) == list(expected.ids)
    assert [tuple(r) for r in fast.columns.retrieved] == list(expected.retrieved)
    assert [dict(r) for r in fast.columns.relevance] == [dict(r) for r in expected.relevance]
    for got, want in zip(fast.columns.relevance, expected.relevance):
        assert list(got) == list(want)  # the same key order, and floats only
        assert all(type(v) is float for v in got.values())
    return fast


any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


tricky = st.sampled_from(['"', "\\", "\n", "\x00", "\x1f", "\x7f", "\u2028", "é", "\U0001F600", ":", ",", "{", "}",
                          "[", "]", " ", "\t", "null", '":1,"', "\\u0000"])


texts = st.one_of(any_text, st.lists(tricky, max_size=4).map("".join))


ids = texts.filter(lambda s: bool(s.strip()))


grades = st.one_of(st.integers(-(10 ** 20), 10 ** 20), st.integers(0, 3),
                   st.floats(allow_nan=False, allow_infinity=False),
                   st.sampled_from([1e16, 1e-5, 1e22, 2.5e-7, -0.0, 0.0, 5e-324, 1.7976931348623157e308]))


@st.composite
def records(draw: st.DrawFn) -> list[dict[str, Any]]:
    sids = draw(st.lists(ids, min_size=1, max_size=6, unique=True))
    out = []
    for sid in sids:
        rec: dict[str, Any] = {"id": sid}
        if draw(st.booleans()):
            rec["question"] = draw(st.one_of(st.none(), texts))
        if draw(st.booleans()):
            rec["retrieved"] = draw(st.one_of(st.none(), st.lists(ids, max_size=5, unique=True)))
        kind = draw(st.sampled_from(["none", "null", "list", "dict"]))
        if kind == "null":
            rec["relevant"] = None
        elif kind == "list":
            rec["relevant"] = draw(st.lists(ids, max_size=4, unique=True))
        elif kind == "dict":
            rec["relevant"] = draw(st.dictionaries(texts, grades, max_size=4))
        for field in ("answer", "reference"):
            if draw(st.integers(0, 4)) == 0:
                rec[field] = draw(st.one_of(st.none(), texts))
        keys = list(rec)
        order = draw(st.permutations(keys))
        out.append({k: rec[k] for k in order})
    return out


def summary(file: Any) -> tuple:
    c = file.columns
    return (list(c.ids), list(c.retrieved), list(c.relevance), file.questions, file.answers, file.references,
            file.fingerprint, file.testset_fingerprint)


@pytest.mark.slow
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
        from tests.io.test_label_file import general, outcome

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


@pytest.mark.slow
@given(rows=records(), ascii_only=st.booleans(), compact=st.booleans(), crlf=st.booleans())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_plain_records_read_as_the_general_reader_reads_them(rows: list[dict[str, Any]], ascii_only: bool,
                                                             compact: bool, crlf: bool) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    end = "\r\n" if crlf else "\n"
    text = "".join(json.dumps(r, ensure_ascii=ascii_only, separators=separators) + end for r in rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = write(tmp, text)
        assert decode_label_lines(text.encode()) is not None  # the columnar reader took it
        fast = assert_same_as_general(path)
        for i in range(len(rows)):  # built on first access, then kept
            assert fast.samples[i] is fast.samples[i]


@pytest.mark.slow
@given(rows=records())
@settings(max_examples=100, deadline=None)
def test_batches_give_the_digests_of_one_pass(rows: list[dict[str, Any]]) -> None:
    """The fingerprints are hashed a batch of records at a time: any batch size, the same digests."""
    import ragmeter.io.label_prints as prints

    raw = "".join(json.dumps(r) + "\n" for r in rows).encode()
    whole = decode_label_lines(raw)
    saved = prints.BATCH
    try:
        prints.BATCH = 1
        one = decode_label_lines(raw)
    finally:
        prints.BATCH = saved
    assert whole is not None and one is not None
    assert (whole.fingerprint, whole.testset_fingerprint) == (one.fingerprint, one.testset_fingerprint)


LINE_PIECES = st.sampled_from([b"{", b"}", b"\n", b" ", b"\t", b"\r", b"a", b"}\n{", b"\n\n"])


@given(raw=st.lists(LINE_PIECES, max_size=12).map(b"".join))
@settings(max_examples=500, deadline=None)
def test_the_usual_layout_is_what_the_line_checks_find(raw: bytes) -> None:
    """Where each line is ``{...}`` and the file ends with ``}\\n`` (the quick check), the line
    count and the one-value-a-line check the reader skips give what the quick check assumes."""
    if label_file._one_object_a_line(raw):
        assert label_file._json_lines(raw) == raw.count(b"\n")
        assert label_file._no_value_spans_lines(raw)


@pytest.mark.slow
@given(rows=records(), layout=st.lists(st.sampled_from(["", "\n", " ", "\t", "\r", "\n \n"]), min_size=3, max_size=3),
       final=st.booleans())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_blank_lines_and_spaces_read_as_the_general_reader_reads_them(rows: list[dict[str, Any]],
                                                                      layout: list[str], final: bool) -> None:
    """Whitespace before or after a record, blank lines between them, no newline at the end:
    the columnar reader's samples and fingerprints, or its refusal, are the general reader's."""
    before, after, between = layout
    text = between.join(before + json.dumps(r) + after + "\n" for r in rows)
    text = text if final else text.rstrip("\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = write(tmp, text)
        got, want = outcome(load_dataset, path), outcome(general, path)
        assert got == want
        if got[0] == "ok" and read_label_file(path) is not None:
            assert_same_as_general(path)


def test_the_bench_shape_and_its_samples(tmp_path: Path) -> None:
    path = write(str(tmp_path), BENCH_LIKE)
    data = assert_same_as_general(path)
    samples = data.samples
    assert len(samples) == 2 and samples[-1].id == "q1" and samples[-2].id == "q0"
    assert samples[0:1] == (samples[0],) and samples[::-1] == (samples[1], samples[0])
    assert [s.id for s in samples] == ["q0", "q1"]
    assert tuple(samples) == samples and samples == tuple(samples)
    with pytest.raises(IndexError):
        samples[2]
    with pytest.raises(TypeError):
        samples[0].relevance["d3"] = 5.0  # type: ignore[index]
    assert dict(samples[0].relevance) == {"d3": 1.0, "d9": 2.0}
    assert samples[0].retrieved_ids == ("d1", "d2", "d3")
    assert data.columns is not None and list(data.columns.retrieved[1]) == ["d2"]
    assert load_dataset(data) is data


NOT_PLAIN = {
    "duplicate id": '{"id": "a"}\n{"id": "a"}\n',
    "blank id": '{"id": " "}\n',
    "empty id": '{"id": ""}\n',
    "integer id": '{"id": 7, "question": "q"}\n',
    "no id": '{"question": "q"}\n',
    "null id": '{"id": null, "question": "q"}\n',
    "alias field": '{"query_id": "a", "question": "q"}\n',
    "alias question": '{"id": "a", "query": "q"}\n',
    "close unknown field": '{"id": "a", "retreived": ["x"]}\n',
    "other field": '{"id": "a", "topic": "x"}\n',
    "metadata": '{"id": "a", "metadata": {"m": 1}}\n',
    "context": '{"id": "a", "context": ["x"]}\n',
    "two objects on a line": '{"id": "a"} {"id": "b"}\n',
    "two objects on a line, no space": '{"id": "a"}{"id": "b"}\n',
    "an object across two lines": '{"id":\n"a"}\n',
    "an object across lines, then two on one": '{"id":\n"a"} {"id": "b"}\n',
    "an object across lines at a brace": '{"id": "a", "relevant": {"x": 1}\n, "question": "q"} {"id": "b"}\n',
    "carriage return between objects": '{"id": "a"}\r{"id": "b"}\n',
    "not an object": '["a"]\n',
    "not JSON": '{"id": "a"\n',
    "NaN grade": '{"id": "a", "relevant": {"x": NaN}}\n',
    "infinite grade": '{"id": "a", "relevant": {"x": 1e999}}\n',
    "huge integer grade": '{"id": "a", "relevant": {"x": ' + "9" * 400 + "}}\n",
    "boolean grade": '{"id": "a", "relevant": {"x": true}}\n',
    "string grade": '{"id": "a", "relevant": {"x": "1"}}\n',
    "duplicate retrieved id": '{"id": "a", "retrieved": ["x", "x"]}\n',
    "blank retrieved id": '{"id": "a", "retrieved": ["x", " "]}\n',
    "retrieved as a string": '{"id": "a", "retrieved": "x"}\n',
    "retrieved objects": '{"id": "a", "retrieved": [{"id": "x", "score": 0.5}]}\n',
    "retrieved objects with a text": '{"id": "a", "retrieved": [{"id": "x", "text": "t"}]}\n',
    "retrieved objects, a score first": '{"id": "a", "retrieved": [{"score": 1, "id": "x"}]}\n',
    "retrieved objects, duplicate ids": '{"id": "a", "retrieved": [{"id": "x"}, {"id": "x"}]}\n',
    "duplicate relevant id": '{"id": "a", "relevant": ["x", "x"]}\n',
    "blank relevant id": '{"id": "a", "relevant": [""]}\n',
    "relevant integer ids": '{"id": "a", "relevant": [1, 2]}\n',
    "lone surrogate": '{"id": "a\\ud800"}\n',
    "raw control character": '{"id": "a\x01"}\n',
    "nested too deep": '{"id": "a", "relevant": ' + "[" * 5000 + "]" * 5000 + "}\n",
    "a corpus record": '{"id": "a", "text": "chunk text"}\n',
    "a conversation": '{"id": "a", "turns": [{"question": "q"}]}\n',
    "empty file": "",
    "blank file": "\n \n",
    "question a number": '{"id": "a", "question": 3}\n',
    "unanswerable": '{"id": "a", "question": "q", "answerable": false}\n',
    "answerable null": '{"id": "a", "question": "q", "answerable": null}\n',
    "answerable a string": '{"id": "a", "question": "q", "answerable": "yes"}\n',
    "form feed line": '{"id": "a"}\n\x0c\n{"id": "b"}\n',
    "non-breaking space line": '{"id": "a"}\n\u00a0\n{"id": "b"}\n',
}


@pytest.mark.parametrize("name", sorted(NOT_PLAIN))
def test_other_records_take_the_general_reader(name: str, tmp_path: Path) -> None:
    path = write(str(tmp_path), NOT_PLAIN[name])
    assert read_label_file(path) is None
    got, want = outcome(load_dataset, path), outcome(general, path)
    if want[0] == "error":  # the message is the general reader's, word for word
        assert got == want
    else:
        assert got == want and load_dataset(path).columns is None


def test_invalid_utf8_takes_the_general_reader(tmp_path: Path) -> None:
    path = write(str(tmp_path), b'{"id": "a"}\n{"id": "\xff"}\n')
    assert read_label_file(path) is None
    with pytest.raises(InvalidInputError, match="line 2: not valid UTF-8"):
        load_dataset(path)


PLAIN_VARIANTS = {
    "byte order mark": "\ufeff" + BENCH_LIKE,
    "blank lines": "\n" + BENCH_LIKE.replace("\n", "\n \t\r\n", 1) + "\n\n",
    "no final newline": BENCH_LIKE.rstrip("\n"),
    "crlf": BENCH_LIKE.replace("\n", "\r\n"),
    "trailing whitespace line": BENCH_LIKE + "  ",
    "whitespace around objects": ' \t{"id": "a"}  \n\r\n {"id": "b", "retrieved": ["x"]}\t\r\n',
    "duplicate key, last wins": '{"id": "x", "id": "a", "relevant": {"d": 1, "e": 2, "d": 3}}\n',
    "nulls": '{"id": "a", "question": null, "retrieved": null, "relevant": null, "answer": null}\n',
    "answer and reference": '{"id": "a", "answer": "yes \\"quoted\\"", "reference": "r"}\n',
    "negative zero grades": '{"id": "a", "relevant": {"x": -0, "y": -0.0, "z": 9007199254740993}}\n',
    "grades repr writes with an exponent": '{"id": "a", "relevant": {"x": 1e16, "y": 0.00001, "z": 1.5e300}}\n',
    "keys with colons and commas": '{"id": "a", "relevant": {"x:1": 1, "y,": 2, ":": 3, ",\\"": 1}}\n',
    "ids with escapes": '{"id": "a\\\\b\\n", "retrieved": ["x\\"", "\\u0000", "\\\\u0000"], "relevant": ["\\tx"]}\n',
    "answerable true, as a run's samples.jsonl writes it":
        '{"id": "a", "question": "q", "retrieved": ["x"], "relevant": {"x": 1.0}, "answerable": true}\n',
    "chunks by id alone, an id with a colon": '{"id": "a", "retrieved": [{"id": "x:1"}]}\n',
    "chunks by id alone, an id with a brace": '{"id": "a", "retrieved": [{"id": "y}"}, {"id": "{z"}]}\n',
    "chunks by id alone, with escapes": '{"id": "a\\"", "retrieved": [{"id": "x\\\\"}, "y"], "relevant": ["y"]}\n',
    "chunks by id alone, as a run's samples.jsonl writes them":
        '{"id": "a", "retrieved": [{"id": "x"}, {"id": "y"}, {"id": "z"}], "relevant": {"x": 1.0}, '
        '"answerable": true}\n{"id": "b", "retrieved": [], "answerable": true}\n',
}


@pytest.mark.parametrize("name", sorted(PLAIN_VARIANTS))
def test_plain_variants_take_the_columnar_reader(name: str, tmp_path: Path) -> None:
    path = write(str(tmp_path), PLAIN_VARIANTS[name], name="d.ndjson")
    assert read_label_file(path) is not None
    assert_same_as_general(path)


def test_json_and_corpus_keep_the_general_reader(tmp_path: Path) -> None:
    """``.json`` files, and a corpus given with the data, are read as before (samples as a tuple)."""
    path = write(str(tmp_path), BENCH_LIKE, name="d.json")
    assert load_dataset(path).columns is None and isinstance(load_dataset(path).samples, tuple)
    jsonl = write(str(tmp_path), BENCH_LIKE)
    corpus = write(str(tmp_path), '{"id": "d1", "text": "one"}\n', name="corpus.jsonl")
    data = load_dataset(jsonl, corpus=corpus)
    assert data.columns is None and data.samples[0].retrieved[0].text == "one"


def blocks_outcome(path: str, block: int) -> tuple[str, Any]:
    from ragmeter.io.jsonl_blocks import iter_blocks, scan

    try:
        prints = scan(path)
        blocks = [tuple(b) for b in iter_blocks(path, block)]
    except InvalidInputError as exc:
        return "error", str(exc)
    return "ok", (prints, blocks)


def blocks_general(path: str, block: int) -> tuple[str, Any]:
    """The streamed reader with the columnar reader turned off: every chunk line by line."""
    with patch("ragmeter.io.jsonl_blocks.decode_part", lambda _: None):
        return blocks_outcome(path, block)


@pytest.mark.slow
@given(rows=records(), block=st.integers(1, 4), chunk=st.sampled_from([1, 40, 200, 1 << 24]))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_blocks_and_scan_read_as_before(rows: list[dict[str, Any]], block: int, chunk: int) -> None:
    """Chunks of any size (one line, a few, the whole file): the same samples in the same blocks,
    and ``scan``'s fingerprints equal to ``load_dataset``'s."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    with tempfile.TemporaryDirectory() as tmp, patch("ragmeter.io.jsonl_blocks.CHUNK_BYTES", chunk):
        path = write(tmp, text)
        from ragmeter.io.jsonl_blocks import _scan_plain

        assert _scan_plain(path) is not None  # the columnar reader took every chunk
        got = blocks_outcome(path, block)
        assert got == blocks_general(path, block)
        data = load_dataset(path)
        assert got[1][0] == (data.fingerprint, data.testset_fingerprint, len(rows))


@pytest.mark.parametrize("chunk", [1, 30, 1 << 24])
@pytest.mark.parametrize("name", sorted(NOT_PLAIN))
def test_blocks_leave_other_records_to_the_line_reader(name: str, chunk: int, tmp_path: Path) -> None:
    """A file of plain records with one other record among them (in its own chunk or not):
    the same samples, or the same error naming the same line."""
    text = BENCH_LIKE + NOT_PLAIN[name] + BENCH_LIKE.replace('"q', '"r')
    path = write(str(tmp_path), text)
    with patch("ragmeter.io.jsonl_blocks.CHUNK_BYTES", chunk):
        assert blocks_outcome(path, 2) == blocks_general(path, 2)


@pytest.mark.parametrize("chunk", [1, 30, 1 << 24])
@pytest.mark.parametrize("name", sorted(PLAIN_VARIANTS))
def test_blocks_of_plain_variants(name: str, chunk: int, tmp_path: Path) -> None:
    from ragmeter.io.jsonl_blocks import _scan_plain

    path = write(str(tmp_path), PLAIN_VARIANTS[name])
    with patch("ragmeter.io.jsonl_blocks.CHUNK_BYTES", chunk):
        assert _scan_plain(path) is not None
        assert blocks_outcome(path, 1) == blocks_general(path, 1)


def test_without_msgspec_the_general_reader_reads_every_file(tmp_path: Path) -> None:
    """msgspec is a core dependency, but the core still reads datasets without it: every file
    through the general reader (columns None), with the same fingerprints."""
    import subprocess
    import sys

    import ragmeter

    path = write(str(tmp_path), BENCH_LIKE)
    code = ("import sys\nsys.modules['msgspec'] = None\nfrom ragmeter.io.dataset import load_dataset\n"
            "from ragmeter.io.jsonl_blocks import scan\n"
            f"d = load_dataset({path!r})\nprint(d.columns is None, d.fingerprint, d.testset_fingerprint, "
            f"scan({path!r})[:2] == (d.fingerprint, d.testset_fingerprint))")
    env = {**os.environ, "PYTHONPATH": str(Path(ragmeter.__file__).parent.parent)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    data = load_dataset(path)
    assert data.columns is not None
    assert done.stdout.split() == ["True", data.fingerprint, data.testset_fingerprint, "True"]


@pytest.mark.parametrize("literal", ["1.", ".5", "+1", "01", "-01", "1e-400", "-1e-400", "1E+2", "0x10", "1e", "-0",
                                     "00", "1.0e-0000000000000000000000001", "1" + "0" * 400 + "e-400",
                                     "0." + "0" * 500 + "1", "123456789012345678901234567890e-10",
                                     "2.4703282292062328e-324", "2.4703282292062327e-324", "9" * 309, "1e308",
                                     "17976931348623158e292", "9007199254740993", "-9007199254740993.0"])
def test_grade_literals_read_as_json_reads_them(literal: str, tmp_path: Path) -> None:
    """A grade written any way JSON allows (or not): msgspec's number is json's float, or the
    file goes to the general reader."""
    path = write(str(tmp_path), '{"id": "a", "relevant": {"x": ' + literal + "}}\n")
    assert outcome(load_dataset, path) == outcome(general, path)


RECORDS = [
    {"id": "q1", "retrieved": ["a", "b", "c", "d"], "relevant": ["b", "d"]},
    {"id": "q2", "retrieved": ["x", "y"], "relevant": {"y": 2, "z": 1}},
    {"id": "q3", "retrieved": ["α", "β"], "relevant": {"α": 1.0}},
]


def odd_label_file(tmp_path: Path) -> Path:
    """The records with a BOM, CRLF line ends, raw UTF-8 ids and blank lines: odd but valid."""
    path = tmp_path / "odd.jsonl"
    body = "\r\n".join(json.dumps(r, ensure_ascii=False) for r in RECORDS)
    path.write_bytes(("\ufeff" + body + "\r\n\r\n").encode("utf-8"))
    return path


def test_odd_file_scores_as_computed_by_hand(tmp_path: Path) -> None:
    result = ragmeter.evaluate(odd_label_file(tmp_path), "ndcg@10,mrr")
    ndcg = [(1 / np.log2(3) + 1 / np.log2(5)) / (1 + 1 / np.log2(3)),  # b, d at ranks 2, 4
            (2 / np.log2(3)) / (2 + 1 / np.log2(3)),  # y (grade 2) at rank 2; ideal y, z
            1.0]
    assert result.values("ndcg@10") == ndcg
    assert result.values("reciprocal_rank@5") == [1 / 2, 1 / 2, 1.0]
    assert result["mrr"][0].value == 1 / 2
