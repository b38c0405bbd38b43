"""The label path's fast paths give what the general path gives, on generated data.

- reading: a record in the plainest shape is made into its Sample in bulk
  (``RowReader._plain_sample``); with that path switched off every record goes field by field.
  Same samples, fingerprints, outcomes, means, intervals and JSON, and the same error for bad
  input (hypothesis: graded and list labels, missing fields, empty lists, extra fields, ids with
  escapes, and broken records);
- fingerprints: ``canonical_texts`` against the formula it replaces (``json.dumps`` of the
  canonical dict), on samples made in code (scores, texts, metadata, NaN, NUL and backslashes);
- the ranked batch: scattered at once against the row-by-row build it replaces;
- ``eval --format json``: the templated text against ``json.dumps(to_dict(), indent=2)``.
"""

from __future__ import annotations

import hashlib
import json
import math
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.results import Failed, NotComputed, Provenance, Score
from ragmeter.core.sample import Chunk, Sample
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.dataset import TEST_FIELDS, _canonical, canonical_texts, from_samples, load_dataset
from ragmeter.io.rows import RowReader
from ragmeter.metrics.batch import RankedBatch
from ragmeter.report.result_json import result_json, result_text

pytestmark = pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning", "ignore::RuntimeWarning")

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


@settings(max_examples=300, deadline=None)
@given(s=samples)
def test_canonical_texts_are_the_canonical_dicts_json(s):
    c = _canonical(s)
    assert canonical_texts(s) == (json.dumps(c, sort_keys=True, ensure_ascii=False, separators=(",", ":")),
                                  json.dumps({k: c[k] for k in TEST_FIELDS}, sort_keys=True, ensure_ascii=False))


def test_fingerprints_of_the_bundled_sample_are_unchanged(warranty):
    data = load_dataset(warranty / "dataset.jsonl")
    assert (data.fingerprint, data.testset_fingerprint) == _old_fingerprints(data.samples)
    assert from_samples(data.samples).fingerprint == data.fingerprint


def _old_batch(ranked, labels) -> RankedBatch:
    """The row-by-row build ``from_lists`` replaced."""
    n = len(ranked)
    grades = np.full((n, max((len(r) for r in ranked), default=0)), np.nan)
    label_grades = np.full((n, max((len(lab) for lab in labels), default=0)), -np.inf)
    for i, (ids_, lab) in enumerate(zip(ranked, labels)):
        if lab:
            grades[i, : len(ids_)] = [lab.get(cid, np.nan) for cid in ids_]
            label_grades[i, : len(lab)] = sorted(lab.values(), reverse=True)
    return RankedBatch(grades, np.array([len(r) for r in ranked], dtype=np.int64), label_grades,
                       np.array([len(lab) > 0 for lab in labels], dtype=bool))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from("abcdefg"), max_size=6, unique=True),
                          st.dictionaries(st.sampled_from("abcdefgh"), st.sampled_from([0.0, 1.0, 2.0, -1.0]),
                                          max_size=4)), max_size=6))
def test_ranked_batch_scattered_at_once_is_the_row_by_row_batch(pairs):
    ranked, labels = [p[0] for p in pairs], [p[1] for p in pairs]
    new, old = RankedBatch.from_lists(ranked, labels), _old_batch(ranked, labels)
    for a, b in ((new.grades, old.grades), (new.lengths, old.lengths), (new.label_grades, old.label_grades),
                 (new.has_labels, old.has_labels)):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype and a.shape == b.shape


def _provenance(name: str) -> Provenance:
    return Provenance(metric=name, metric_name=name, metric_version=1, params={}, k=None, view="retrieved",
                      ragmeter_version="0")


values = st.one_of(st.floats(allow_infinity=False), st.integers(-2, 2))
outcomes = st.one_of(st.builds(Score, values, st.just(_provenance("m"))),
                     st.builds(NotComputed, st.text(max_size=4), st.just(_provenance("m"))),
                     st.builds(Failed, st.text(max_size=4), st.just(_provenance("m"))))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(ids, outcomes, outcomes), min_size=0, max_size=5, unique_by=lambda t: t[0]))
def test_result_json_is_json_dumps_indented(rows):
    from ragmeter.metrics import parse_measure

    measures = (parse_measure("mrr@5"), parse_measure("ndcg@5"))
    result = EvaluationResult(tuple(Sample(i) for i, _, _ in rows), measures,
                              {measures[0]: tuple(a for _, a, _ in rows), measures[1]: tuple(b for _, _, b in rows)},
                              "f" * 16, None)
    expected = json.dumps(result.to_dict(), indent=2, ensure_ascii=False)
    assert result_text(result) == expected
    assert result_json(result.to_dict()) == expected


def test_eval_format_json_prints_the_indented_document(cli, warranty):
    out = cli("eval", warranty / "dataset.jsonl", "--format", "json", "--no-save", "-m", "mrr,ndcg,faithfulness",
              "--judge", "none")
    assert out.exit_code == 0, out.output
    result = evaluate(load_dataset(warranty / "dataset.jsonl"), ["mrr", "ndcg", "faithfulness"])
    doc = result.to_dict()
    doc["dataset"]["path"] = str(warranty / "dataset.jsonl")
    assert out.output == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    shown = json.loads(out.output)["metrics"]["reciprocal_rank@5"]["mean"]
    assert math.isclose(shown, result.means()["reciprocal_rank@5"])


json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.integers(),
                                     st.text(alphabet=st.sampled_from('ab@:/"\\\nx-'), max_size=12),
                                     st.sampled_from(["http://u:p@host/v1", "key sk-secret\"99 here", "tok-abcdefgh"])),
                           lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.text(alphabet="ab@k", max_size=3), inner,
                                                                   max_size=3)), max_leaves=8)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(rows=[{"id": 'key sk-secret"99 here'}], secret='sk-secret"99')  # written escaped in the text
@example(rows=[{"id": ["http://u:p@host/v1"]}], secret=None)
@given(rows=st.lists(st.dictionaries(st.sampled_from(["id", "metrics", "x@y"]), json_values, max_size=3), max_size=4),
       secret=st.sampled_from([None, "tok-abcdefgh", 'sk-secret"99']))
def test_run_file_lines_are_the_redacted_rows_json(monkeypatch, rows, secret):
    """The run directory's JSONL lines, written from each row's text when nothing in it can be
    redacted, are the lines of the rows redacted value by value."""
    from ragmeter.core.secrets import redact_value, redacted_json_lines

    monkeypatch.delenv("BENCH_API_KEY", raising=False)
    if secret:
        monkeypatch.setenv("BENCH_API_KEY", secret)
    assert list(redacted_json_lines(rows)) == [json.dumps(redact_value(r), ensure_ascii=False) for r in rows]
