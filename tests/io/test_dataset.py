"""Bad input: every error names the file, the line and the field, and never shows a traceback."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter import InvalidInputError, load_corpus, load_dataset
from ragmeter.core.errors import RagmeterError
from ragmeter.core.sample import Chunk, Sample
from ragmeter.io.dataset import TEST_FIELDS, _canonical, canonical_texts, from_samples


def write(tmp_path, name, text, mode="w"):
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def jsonl(*rows):
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n"


GOOD = {"id": "q1", "retrieved": ["a", "b"], "relevant": ["a"]}


@pytest.mark.parametrize("row,line,field,words", [
    ({"id": "q2", "retrieved": "a,b"}, 2, "retrieved", "must be a list of chunk ids, got a string"),
    ({"retrieved": ["a"]}, 2, "id", "missing sample id"),
    ({"id": "q1", "retrieved": ["x"]}, 2, "id", "duplicate sample id (first seen on line 1)"),
    ({"id": "q2", "retrieved": ["a", "b", "a"]}, 2, "retrieved",
     'chunk "a" appears twice in one ranked list (ranks 1 and 3)'),
    ({"id": "q2", "relevant": {"a": "high"}}, 2, "relevant", 'grade of chunk "a" must be a finite number'),
    ({"id": "q2", "relevant": "a"}, 2, "relevant", "must be a list of chunk ids"),
    ({"id": "q2", "answerable": "no"}, 2, "answerable", "must be true or false"),
    ({"id": "q2", "relevnt": ["a"]}, 2, "relevnt", 'did you mean "relevant"'),
    ({"id": 3.5}, 2, "id", "sample id must be a string, got a number"),
    ({"id": "q2", "retrieved": [{"id": "a", "score": "x"}]}, 2, "retrieved", "score must be a finite number"),
    ({"id": "q2", "context": ["a", "a"]}, 2, "context", 'chunk "a" appears twice'),
    ({"id": "q2", "question": 7}, 2, "question", "must be a string, got a number"),
])
def test_jsonl_row_errors_name_line_and_field(tmp_path, row, line, field, words):
    p = write(tmp_path, "d.jsonl", jsonl(GOOD, row))
    with pytest.raises(InvalidInputError) as info:
        load_dataset(p)
    msg = str(info.value)
    assert f"d.jsonl, line {line}" in msg and f'field "{field}"' in msg and words in msg, msg


def test_not_json(tmp_path):
    p = write(tmp_path, "d.jsonl", jsonl(GOOD, '{"id": "q2", "retrieved": [}'))
    with pytest.raises(InvalidInputError, match=r"d.jsonl, line 2: not valid JSON"):
        load_dataset(p)


def test_non_utf8_names_the_line(tmp_path):
    p = write(tmp_path, "d.jsonl", jsonl(GOOD).encode() + b'{"id": "caf\xe9"}\n')
    with pytest.raises(InvalidInputError,
                       match=r"line 2: not valid UTF-8 \(byte 0xe9 at column 12\).*save the file as UTF-8"):
        load_dataset(p)


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_file(tmp_path, content):
    p = write(tmp_path, "d.jsonl", content)
    with pytest.raises(InvalidInputError, match="the file is empty"):
        load_dataset(p)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(InvalidInputError, match="file not found"):
        load_dataset(tmp_path / "nope.jsonl")
    with pytest.raises(InvalidInputError, match="unknown dataset format '.txt'"):
        load_dataset(write(tmp_path, "d.txt", "x"))


def test_ids_are_strings_and_leading_zeros_matter(tmp_path):
    p = write(tmp_path, "d.jsonl", jsonl({"id": "01", "retrieved": ["1", "01"], "relevant": ["01"]},
                                         {"id": 1, "retrieved": [7], "relevant": [7]}))
    data = load_dataset(p)
    assert [s.id for s in data] == ["01", "1"]
    assert data.samples[0].retrieved_ids == ("1", "01") and data.samples[1].retrieved_ids == ("7",)
    assert dict(data.samples[0].relevance) == {"01": 1.0}


def test_csv_dataset(tmp_path):
    p = write(tmp_path, "d.csv", 'id,question,retrieved,relevant,answerable\n'
                                 'q1,"Where, exactly?",a|b|c,"{""b"": 2}",false\n'
                                 'q2,Why?,"[""x"", ""y""]",x,\n')
    data = load_dataset(p)
    q1, q2 = data.samples
    assert q1.question == "Where, exactly?" and q1.retrieved_ids == ("a", "b", "c")
    assert dict(q1.relevance) == {"b": 2.0} and q1.answerable is False
    assert q2.retrieved_ids == ("x", "y") and dict(q2.relevance) == {"x": 1.0} and q2.answerable is True


@pytest.mark.parametrize("text,line,words", [
    ("id,retrieved\nq1,a|b|a\n", 2, 'chunk "a" appears twice'),
    ("id,retrieved\nq1,a\nq1,b\n", 3, "duplicate sample id"),
    ("id,retrieved\nq1,a,extra\n", 2, "has 3 cells but the header has 2"),
    ("id,answerable\nq1,maybe\n", 2, "must be true or false"),
    ("id,relevant\nq1,[oops\n", 2, "cell is not valid JSON"),
])
def test_csv_errors(tmp_path, text, line, words):
    p = write(tmp_path, "d.csv", text)
    with pytest.raises(InvalidInputError) as info:
        load_dataset(p)
    assert f"d.csv, line {line}" in str(info.value) and words in str(info.value), str(info.value)


def test_corpus_supplies_texts_and_rejects_duplicates(tmp_path, warranty):
    data = load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    assert data.samples[0].retrieved[1].text.startswith("The R2 router carries a 24-month")
    assert len(load_corpus(warranty / "corpus.jsonl")) == 12
    p = write(tmp_path, "c.jsonl", jsonl({"id": "a", "text": "x"}, {"id": "a", "text": "y"}))
    with pytest.raises(InvalidInputError,
                       match=r'c.jsonl, line 2 \(id "a"\), field "id": duplicate chunk id \(first on line 1\)'):
        load_corpus(p)
    p = write(tmp_path, "c.csv", "id,text\na,hello\nb,\n")
    with pytest.raises(InvalidInputError, match=r'c.csv, line 3 \(id "b"\), field "text": missing'):
        load_corpus(p)


def test_cli_prints_one_line_and_exits_2(cli, tmp_path):
    p = write(tmp_path, "d.jsonl", jsonl(GOOD, {"id": "q2", "retrieved": "a"}))
    result = cli("eval", p)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert 'line 2 (id "q2"), field "retrieved": must be a list of chunk ids, got a string' in result.output


def test_cli_rejects_unknown_metric(cli, warranty):
    result = cli("eval", warranty / "dataset.jsonl", "--metrics", "ndgc@5")
    assert result.exit_code == 2 and "did you mean 'ndcg'" in result.output


def test_fingerprint_ignores_format_but_not_content(tmp_path):
    a = load_dataset(write(tmp_path, "a.jsonl", jsonl(GOOD)))
    b = load_dataset(write(tmp_path, "b.csv", "id,retrieved,relevant\nq1,a|b,a\n"))
    c = load_dataset(write(tmp_path, "c.jsonl", jsonl({**GOOD, "relevant": ["b"]})))
    assert a.fingerprint == b.fingerprint != c.fingerprint


def test_csv_without_an_id_column_takes_positions_and_says_so(tmp_path, capsys):
    """Issue 18 (was: "the header has no 'id' column"): data with no ids at all (Ragas and
    DeepEval exports have none) takes each record's position as its id, said once on stderr;
    a file where only some records have ids is still refused (see the JSONL case above)."""
    p = write(tmp_path, "d.csv", "question,retrieved\nq,a\nr,b\n")
    assert [s.id for s in load_dataset(p)] == ["1", "2"]
    err = capsys.readouterr().err
    assert err.count("no record has an id; each sample's id is its position (1 to 2)") == 1, err


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)


HOSTILE_TEXT = st.sampled_from(["", " ", "\x00", "\x1b[2J", "\u2028", "\u0085", "\x0c", "\ufeff", "\r", "a\nb",
                                "[red]x", "=cmd|' /C calc'!A0", "\ud800", "\udfff", "é", "𝔘", "NaN", "-", "0"])


HOSTILE_NUMBER = st.sampled_from([0, 1, -1, 2 ** 63, -(2 ** 63) - 1, 10 ** 400, float("inf"), float("-inf"),
                                  float("nan"), 1e308, -0.0, True, False])


SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20), HOSTILE_TEXT,
                   HOSTILE_NUMBER)


VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.one_of(st.text(max_size=8), HOSTILE_TEXT),
                                                                      inner, max_size=4)), max_leaves=12)


FIELDS = ["id", "question", "retrieved", "relevant", "context", "answer", "reference", "answerable", "metadata",
          "reference_claims", "answer_claims", "text", "request_id", "ts", "attributes", "span_id", "query",
          "turns", "conversation_id", "criteria", "name", "description", "scale", "examples", "faithfulness"]


FUZZ_GOOD = {"id": "q1", "question": "Q?", "retrieved": ["a", {"id": "b", "score": 0.5, "text": "t"}],
        "relevant": {"a": 1}, "context": ["a"], "answer": "ok", "reference": "r", "metadata": {"k": "v"}}


def _dump(value) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (ValueError, RecursionError):
        return "null"


@st.composite
def hostile_line(draw) -> str:
    kind = draw(st.integers(0, 5))
    if kind == 0:  # a good record with one field replaced
        row = dict(FUZZ_GOOD)
        row[draw(st.sampled_from(FIELDS))] = draw(VALUE)
        return _dump(row)
    if kind == 1:
        return _dump(draw(VALUE))
    if kind == 2:  # deep nesting
        depth = draw(st.sampled_from([10, 900, 5000, 100_000]))
        return '{"id": "q", "metadata": ' + "[" * depth + "]" * draw(st.sampled_from([0, depth]))
    if kind == 3:  # long integers and escapes written by hand (json.dumps cannot write some of them)
        return draw(st.sampled_from([
            '{"id": "q", "relevant": {"a": ' + "9" * 5000 + "}}",
            '{"id": ' + "1" * 4000 + "}",
            '{"id": "q", "question": "\\ud800"}',
            '{"id": "q", "relevant": {"a": 1e999}}',
            '{"id": "q", "retrieved": [{"id": "a", "score": NaN}]}',
            '{"id": "q", "answer": "x\u2028y"}',
            '\ufeff{"id": "q"}',
            '{"request_id": "r", "ts": "yesterday", "question": "q"}',
            '{"attributes": {"input.value": 1}, "context": [1]}',
        ]))
    if kind == 4:
        return draw(st.text(max_size=60))
    return ",".join(draw(st.lists(st.one_of(HOSTILE_TEXT, st.text(max_size=10), st.just('"')), max_size=6)))


@st.composite
def hostile_file(draw) -> bytes:
    if draw(st.integers(0, 4)) == 0:
        return draw(st.binary(max_size=300))
    lines = draw(st.lists(hostile_line(), min_size=0, max_size=5))
    sep = draw(st.sampled_from(["\n", "\r\n", "\n\n"]))
    text = sep.join(lines) + draw(st.sampled_from(["", "\n"]))
    return text.encode("utf-8", "surrogatepass")


def _only_typed_errors(data: bytes, name: str, read: Callable[[str], object]) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, name)
        Path(p).write_bytes(data)
        try:
            read(p)
        except RagmeterError:
            pass


def _load_dataset(p: str):
    from ragmeter import load_dataset

    return load_dataset(p)


def _blocks(p: str):
    from ragmeter.io.jsonl_blocks import iter_blocks, scan

    list(iter_blocks(p, 2))
    return scan(p)


@FUZZ
@given(hostile_file())
def test_dataset_jsonl_in_memory_and_streamed(data):
    _only_typed_errors(data, "d.jsonl", _load_dataset)
    _only_typed_errors(data, "d.jsonl", _blocks)
    _only_typed_errors(data, "d.json", _load_dataset)


def test_a_corpus_given_as_the_dataset_is_refused_with_a_hint(cli, warranty):
    with pytest.raises(InvalidInputError, match=r"corpus.jsonl, line 1.*looks like a corpus.*--corpus"):
        load_dataset(warranty / "corpus.jsonl")
    out = cli("eval", warranty / "corpus.jsonl", "--no-save", "--judge", "none")
    assert out.exit_code == 2 and "--corpus" in out.output


ids = st.text(alphabet=st.sampled_from("abc\\\"é\x00\u2028 "), min_size=1, max_size=4).filter(str.strip)


texts = st.one_of(st.none(), st.text(max_size=5))


def _old_fingerprints(samples) -> tuple[str, str]:
    """The formula ``Fingerprints`` replaced: json.dumps of the canonical dict, per sample."""
    full, test = hashlib.sha256(), hashlib.sha256()
    for s in samples:
        c = _canonical(s)
        full.update(json.dumps(c, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        test.update(json.dumps({k: c[k] for k in TEST_FIELDS}, sort_keys=True, ensure_ascii=False).encode() + b"\n")
    return full.hexdigest()[:16], test.hexdigest()[:16]


floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3))


chunks = st.builds(Chunk, ids, st.one_of(st.none(), floats), st.one_of(st.none(), st.text(max_size=3)))


samples = st.builds(
    Sample, ids, texts, st.lists(chunks, max_size=4).map(tuple),
    st.dictionaries(ids, floats, max_size=3).map(MappingProxyType),
    st.one_of(st.none(), st.lists(ids, max_size=2).map(tuple)), texts, texts, st.booleans(),
    st.dictionaries(st.text(max_size=3), st.one_of(floats, st.text(max_size=3)), max_size=2).map(MappingProxyType),
    st.one_of(st.none(), st.lists(st.text(min_size=1, max_size=3), max_size=2).map(tuple)),
    st.one_of(st.none(), st.lists(st.text(min_size=1, max_size=3), max_size=2).map(tuple)))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning", "ignore::RuntimeWarning")
@settings(max_examples=300, deadline=None)
@given(s=samples)
def test_canonical_texts_are_the_canonical_dicts_json(s):
    c = _canonical(s)
    assert canonical_texts(s) == (json.dumps(c, sort_keys=True, ensure_ascii=False, separators=(",", ":")),
                                  json.dumps({k: c[k] for k in TEST_FIELDS}, sort_keys=True, ensure_ascii=False))


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning", "ignore::RuntimeWarning")
def test_fingerprints_of_the_bundled_sample_are_unchanged(warranty):
    data = load_dataset(warranty / "dataset.jsonl")
    assert (data.fingerprint, data.testset_fingerprint) == _old_fingerprints(data.samples)
    assert from_samples(data.samples).fingerprint == data.fingerprint
