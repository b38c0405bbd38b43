"""Bad input: every error names the file, the line and the field, and never shows a traceback."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings

from ragmeter import InvalidInputError, load_corpus, load_dataset
from ragmeter.io.dataset import TEST_FIELDS, _canonical, canonical_texts, from_samples
from tests.hostile import FUZZ, hostile_file, only_typed_errors
from tests.io.test_rows import samples  # the sample strategies


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
    only_typed_errors(data, "d.jsonl", _load_dataset)
    only_typed_errors(data, "d.jsonl", _blocks)
    only_typed_errors(data, "d.json", _load_dataset)


def test_a_corpus_given_as_the_dataset_is_refused_with_a_hint(cli, warranty):
    with pytest.raises(InvalidInputError, match=r"corpus.jsonl, line 1.*looks like a corpus.*--corpus"):
        load_dataset(warranty / "corpus.jsonl")
    out = cli("eval", warranty / "corpus.jsonl", "--no-save", "--judge", "none")
    assert out.exit_code == 2 and "--corpus" in out.output


def _old_fingerprints(samples) -> tuple[str, str]:
    """The formula ``Fingerprints`` replaced: json.dumps of the canonical dict, per sample."""
    full, test = hashlib.sha256(), hashlib.sha256()
    for s in samples:
        c = _canonical(s)
        full.update(json.dumps(c, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        test.update(json.dumps({k: c[k] for k in TEST_FIELDS}, sort_keys=True, ensure_ascii=False).encode() + b"\n")
    return full.hexdigest()[:16], test.hexdigest()[:16]


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
