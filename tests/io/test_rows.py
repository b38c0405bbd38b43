"""Wrong-shaped input: a record with nothing to score and only fields no reader takes is an
error naming the file, the line, the fields found and the formats tried; never one empty
sample with exit 0."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragmeter
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Chunk, Sample
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.dataset import TEST_FIELDS, _canonical, load_dataset
from ragmeter.io.rows import FORMATS_TRIED, RowReader
from ragmeter.report.result_json import result_text


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


def test_a_bad_chunk_id_names_its_fix_in_words(tmp_path: Path) -> None:
    """The fix read 'give each record a string item 1 chunk id'."""
    import pytest

    from ragmeter.core.errors import InvalidInputError

    for item, problem in (("true", "item 2 chunk id must be a string, got a boolean"),
                          ("null", "missing item 2 chunk id")):
        path = tmp_path / "bad.jsonl"
        path.write_text('{"id": "q1", "retrieved": ["a"], "relevant": ["a"]}\n'
                        f'{{"id": "q2", "retrieved": ["b", {item}], "relevant": ["b"]}}\n', encoding="utf-8")
        with pytest.raises(InvalidInputError) as caught:
            ragmeter.load_dataset(path)
        assert str(caught.value) == (f'{path}, line 2 (id "q2"), field "retrieved": {problem}. '
                                     "Fix: write the item 2 chunk id as a non-empty string")


MEASURES = ["precision@3", "recall@3", "hit_rate@3", "reciprocal_rank@3", "ndcg@3", "average_precision",
            "ndcg(gain='exp')@2", "r_precision"]


FAST_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


ids = st.text(alphabet=st.sampled_from("abc\\\"é\x00\u2028 "), min_size=1, max_size=4).filter(str.strip)


grades = st.one_of(st.integers(-2, 3), st.sampled_from([0.5, 1.0, 2.0, -0.0, 1e-7]))


labels = st.one_of(st.none(), st.lists(ids, max_size=4, unique=True), st.dictionaries(ids, grades, max_size=4))


texts = st.one_of(st.none(), st.text(max_size=5))


@st.composite
def records(draw, bad: bool = False) -> list[dict]:
    """Records of a dataset: mostly plain, some with fields the plain path leaves to the reader;
    ``bad``: one record broken somewhere."""
    out = []
    for i in range(draw(st.integers(1, 6))):
        rec: dict = {"id": f"q{i}"}
        if draw(st.booleans()):
            rec["question"] = draw(texts)
        retrieved = draw(st.one_of(st.none(), st.lists(ids, max_size=5, unique=True)))
        if retrieved is not None or draw(st.booleans()):
            rec["retrieved"] = retrieved
        rel = draw(labels)
        if rel is not None or draw(st.booleans()):
            rec["relevant"] = rel
        extra = draw(st.sampled_from(["", "answer", "reference", "metadata", "context", "scored", "answerable"]))
        if extra in ("answer", "reference"):
            rec[extra] = draw(texts)
        elif extra == "metadata":
            rec["metadata"] = {"team": draw(texts)}
        elif extra == "context":
            rec["context"] = list(rec.get("retrieved") or [])[:2]
        elif extra == "scored" and rec.get("retrieved"):
            rec["retrieved"] = [{"id": c, "score": 1.0 / (r + 1)} for r, c in enumerate(rec["retrieved"])]
        elif extra == "answerable":
            rec["answerable"] = draw(st.booleans())
        out.append(rec)
    if bad:
        i = draw(st.integers(0, len(out) - 1))
        field, value = draw(st.sampled_from([
            ("id", out[0]["id"]), ("id", " "), ("id", None), ("id", True), ("retrieved", ["a", "a"]),
            ("retrieved", "a"), ("retrieved", ["a", ""]), ("retrieved", ["a", 3.5]), ("relevant", {"a": True}),
            ("relevant", {"a": "1"}), ("relevant", {"a": None}), ("relevant", ["a", "a"]), ("relevant", "a"),
            ("question", 3), ("answer", ["x"]), ("relevnt", ["a"]), ("text", "a corpus line"),
        ]))
        if field == "id" and value == out[0]["id"] and i == 0:
            i = len(out)
            out.append({"id": "dup"})
        out[i][field] = value
    return out


def _write(tmp_path, rows: list[dict], *, raw: dict[int, str] | None = None):
    path = tmp_path / "data.jsonl"
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    for i, text in (raw or {}).items():
        lines[i] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def general_only(monkeypatch):
    """Switch the plain-record path off: every record is read field by field."""
    def off(monkeypatch_on: bool) -> None:
        if monkeypatch_on:
            monkeypatch.setattr(RowReader, "_plain_sample", lambda self, row, line: None)
        else:
            monkeypatch.undo()
    return off


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
@FAST_SETTINGS
@given(rows=records())
def test_plain_path_gives_what_the_reader_gives(tmp_path, general_only, rows):
    path = _write(tmp_path, rows)
    fast = load_dataset(path)
    general_only(True)
    slow = load_dataset(path)
    general_only(False)
    assert fast.samples == slow.samples
    assert [s.metadata for s in fast.samples] == [s.metadata for s in slow.samples]
    assert (fast.fingerprint, fast.testset_fingerprint) == (slow.fingerprint, slow.testset_fingerprint) \
        == _old_fingerprints(slow.samples)
    a, b = evaluate(fast, MEASURES), evaluate(slow, MEASURES)
    assert a.to_dict() == b.to_dict()  # outcomes, reasons, means, intervals, provenance
    assert result_text(a) == json.dumps(b.to_dict(), indent=2, ensure_ascii=False)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning", "ignore::RuntimeWarning")
@FAST_SETTINGS
@given(rows=records(bad=True))
def test_bad_input_fails_the_same_way_on_both_paths(tmp_path, general_only, rows):
    path = _write(tmp_path, rows)
    errors = []
    for general in (False, True):
        general_only(general)
        try:
            load_dataset(path)
            errors.append(None)
        except InvalidInputError as exc:
            errors.append(str(exc))
    general_only(False)
    assert errors[0] == errors[1]


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning", "ignore::RuntimeWarning")
@pytest.mark.parametrize("line", ['{"id": "q1", "retrieved": ["a"], "relevant": {"a": 1e999}}',
                                  '{"id": "q1", "retrieved": ["a"], "relevant": {"a": NaN}}',
                                  '{"id": "q1", "retrieved": ["a"], "relevant": {"a": ' + "9" * 400 + "}}",
                                  '{"id": "q1", "retrieved": ["a"], "relevant": {"a": -Infinity}}'])
def test_a_grade_past_float_is_refused_on_both_paths(tmp_path, general_only, line):
    path = _write(tmp_path, [{}], raw={0: line})
    with pytest.raises(InvalidInputError, match="finite number") as fast:
        load_dataset(path)
    general_only(True)
    with pytest.raises(InvalidInputError) as slow:
        load_dataset(path)
    assert str(fast.value) == str(slow.value)


floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3))


chunks = st.builds(Chunk, ids, st.one_of(st.none(), floats), st.one_of(st.none(), st.text(max_size=3)))


samples = st.builds(
    Sample, ids, texts, st.lists(chunks, max_size=4).map(tuple),
    st.dictionaries(ids, floats, max_size=3).map(MappingProxyType),
    st.one_of(st.none(), st.lists(ids, max_size=2).map(tuple)), texts, texts, st.booleans(),
    st.dictionaries(st.text(max_size=3), st.one_of(floats, st.text(max_size=3)), max_size=2).map(MappingProxyType),
    st.one_of(st.none(), st.lists(st.text(min_size=1, max_size=3), max_size=2).map(tuple)),
    st.one_of(st.none(), st.lists(st.text(min_size=1, max_size=3), max_size=2).map(tuple)))
