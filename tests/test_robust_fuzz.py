"""Issue 17, proof: a hypothesis fuzz suite over every reader. Whatever the bytes, a reader
returns or raises one of ragmeter's typed errors (``ragmeter.core.errors.RagmeterError``);
no other exception escapes.

Readers: dataset JSONL (in memory and ``--block``), JSON and CSV; corpus (JSONL, CSV); qrels
(trec_eval mode, collection import, BEIR); TREC run; labels (JSONL, CSV); criteria (JSON,
YAML); the live-log line parser and the watcher's poll. Inputs are drawn three ways: raw bytes,
JSON values built from hostile pieces (deep nesting, 5000-digit integers, lone surrogates,
control characters, NaN/inf, huge grades), and valid records with one field replaced.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.core.errors import RagmeterError

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
GOOD = {"id": "q1", "question": "Q?", "retrieved": ["a", {"id": "b", "score": 0.5, "text": "t"}],
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
        row = dict(GOOD)
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


@st.composite
def table_file(draw, header: str) -> bytes:
    rows = [header]
    for _ in range(draw(st.integers(0, 4))):
        rows.append(draw(st.one_of(hostile_line(), st.text(max_size=40))))
    return "\n".join(rows).encode("utf-8", "surrogatepass")


@st.composite
def trec_file(draw, fields: int) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        parts = [draw(st.one_of(st.sampled_from(["q1", "q2", "Q0", "0", "d1", "d2", "1", "-1", "9" * 30, "9" * 5000,
                                                 "nan", "inf", "1e999", "#", "\x00", "é", "r"]),
                                st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)))
                 for _ in range(draw(st.sampled_from([fields, fields, fields - 1, fields + 1])))]
        lines.append(draw(st.sampled_from([" ", "\t", "  "])).join(parts))
    return "\n".join(lines).encode() + draw(st.sampled_from([b"", b"\n"]))


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


@FUZZ
@given(st.one_of(table_file("id,question,retrieved,relevant,answer,metadata,answerable"), hostile_file()))
def test_dataset_csv(data):
    _only_typed_errors(data, "d.csv", _load_dataset)


@FUZZ
@given(st.one_of(hostile_file(), table_file("id,text")))
def test_corpus(data):
    from ragmeter import load_corpus

    _only_typed_errors(data, "c.jsonl", load_corpus)
    _only_typed_errors(data, "c.csv", load_corpus)


@FUZZ
@given(trec_file(4), trec_file(6))
def test_trec_qrels_and_run(qrels, run):
    from ragmeter.trec import evaluate_trec
    from ragmeter.trec.reader import read_qrels, read_run

    _only_typed_errors(qrels, "qrels", read_qrels)
    _only_typed_errors(run, "run", read_run)
    with tempfile.TemporaryDirectory() as d:
        q, r = Path(d, "qrels"), Path(d, "run")
        q.write_bytes(qrels)
        r.write_bytes(run)
        try:
            evaluate_trec(str(q), str(r), ["P.5,1000000000", "map", "ndcg_cut.10", "recall.3"])
        except RagmeterError:
            pass


@FUZZ
@given(trec_file(4), trec_file(3))
def test_collection_qrels_readers(qrels, beir):
    from ragmeter.io.beir import read_beir_qrels
    from ragmeter.io.trec_collection import read_qrels as read_trec_qrels

    _only_typed_errors(qrels, "qrels.txt", read_trec_qrels)
    _only_typed_errors(beir.replace(b" ", b"\t"), "test.tsv", read_beir_qrels)


@FUZZ
@given(st.one_of(hostile_file(), table_file("id,faithfulness,answer_relevancy")))
def test_labels(data):
    from ragmeter.io.labels import load_labels

    _only_typed_errors(data, "labels.jsonl", load_labels)
    _only_typed_errors(data, "labels.csv", load_labels)


@st.composite
def criteria_file(draw) -> bytes:
    item = {"name": "c", "description": "d", "scale": [1, 5], "examples": [{"answer": "a", "score": 3}]}
    if draw(st.booleans()):
        item[draw(st.sampled_from(list(item)))] = draw(VALUE)
    doc = draw(st.sampled_from([{"criteria": [item]}, [item], {"criteria": [item, item]}, item]))
    text = _dump(doc) if draw(st.booleans()) else draw(hostile_line())
    return text.encode("utf-8", "surrogatepass")


@FUZZ
@given(st.one_of(criteria_file(), hostile_file()))
def test_criteria(data):
    from ragmeter.evidence.rubric_criteria import load_criteria

    _only_typed_errors(data, "c.json", load_criteria)
    _only_typed_errors(data, "c.yaml", load_criteria)


@FUZZ
@given(st.lists(st.one_of(hostile_line(), st.binary(max_size=40).map(lambda b: b.decode("latin-1"))), max_size=6))
def test_live_log_reader_and_watcher_never_raise(lines):
    from ragmeter.judges import Judge, ScriptedBackend
    from ragmeter.live.source import LoggedRequest, Rejected, parse
    from ragmeter.live.watch import Watcher

    from . import live_judge

    raw = [line.encode("utf-8", "surrogatepass") for line in lines]
    for r in raw:
        assert isinstance(parse(r), (LoggedRequest, Rejected))  # never raises
    with tempfile.TemporaryDirectory() as d:
        log = Path(d, "req.jsonl")
        log.write_bytes(b"\n".join(raw) + b"\n" + live_judge.request_line(1).encode())
        w = Watcher(str(log), Judge(ScriptedBackend(live_judge.scripted)), Path(d, "state"), metrics=("faithfulness",))
        w.poll()
        while w.pending:
            w.poll()
        assert json.loads(Path(d, "state", "offset.json").read_text())["offset"] == log.stat().st_size
        assert w.counts["scored"] + w.counts["malformed"] + w.counts["duplicates"] <= w.counts["lines"]
