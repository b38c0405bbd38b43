"""Issue 17, item 9: pathological values cost nothing beyond the data and end in located errors.

- k past the longest list allocates by the longest list (``--k 1000000000``, ``P.1000000000``),
  and ``--k 10**30`` is handled (it overflowed the rank pattern before);
- deep JSON, 5000-digit integers, lone surrogates and huge grades are located errors;
- the in-memory and ``--block`` JSONL readers split lines the same way (``\\n`` only) and both
  drop a BOM at the start of the file;
- ``--criteria`` file problems and a user's ``expected_format`` regex are located errors, and a
  catastrophic regex is cut off by the ``regex`` package's timeout.
"""

from __future__ import annotations

import json
import time
import tracemalloc

import pytest

from ragmeter import InvalidInputError, load_dataset
from ragmeter.analysis.diagnosis import REGEX_TIMEOUT_S, format_problem
from ragmeter.evidence.rubric_criteria import load_criteria
from ragmeter.io.jsonl_blocks import iter_blocks
from ragmeter.io.labels import load_labels
from ragmeter.trec.errors import EXIT_TOPIC, TrecInputError
from ragmeter.trec.reader import read_qrels

from .test_io_errors import write

ROWS = [{"id": "q1", "retrieved": ["a", "b", "c"], "relevant": ["b"]},
        {"id": "q2", "retrieved": ["d"], "relevant": ["d", "e"]}]




def test_k_past_the_longest_list_allocates_by_the_data():
    from ragmeter.engine import evaluate
    from ragmeter.io import from_samples
    from ragmeter.io.rows import make_samples

    data = from_samples(make_samples(list(enumerate(ROWS, 1)), "mem"))
    names = ["ndcg", "precision", "recall", "mrr", "map", "hit_rate", "r_precision", "context_precision"]
    small = evaluate(data, names, k=3)
    tracemalloc.start()
    big = evaluate(data, names, k=1_000_000_000)  # padding to k was 2 x 1e9 x 8 bytes
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 * 2 ** 20, peak
    for m_small, m_big in zip(small.measures, big.measures):
        values = [o.value for o in big.outcomes[m_big]]
        if m_small.spec.name == "precision":  # / k: one relevant chunk found in 1e9 ranks
            assert values == [1 / 1_000_000_000, 1 / 1_000_000_000]
        else:  # no cut-off past the list: equal to k = the list length
            assert values == [o.value for o in small.outcomes[m_small]], m_small


def test_k_of_ten_to_the_thirty_is_handled(cli, warranty):
    r = cli("eval", warranty / "dataset.jsonl", "--k", str(10 ** 30), "--no-save", "--judge", "none",
            "-m", "ndcg,precision,mrr")
    assert r.exit_code == 0, r.output
    assert "ranks 1-5 " in r.output and f"nDCG@{10 ** 30}" in r.output


def test_trec_huge_cut_off_allocates_nothing(tmp_path):
    from ragmeter.trec import evaluate_trec

    qrels = write(tmp_path, "q", "q1 0 d1 1\nq1 0 d2 0\n")
    run = write(tmp_path, "r", "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d1 1 1 r\nq2 Q0 d9 2 0.5 r\n")
    tracemalloc.start()
    result = evaluate_trec(str(qrels), str(run), ["P.1000000000", "map_cut.1000000000", "success.1000000000",
                                                  "recall.1000000000", "relative_P.1000000000"])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 * 2 ** 20, peak
    d = result.per_topic
    assert d["P_1000000000"].tolist() == [1 / 1_000_000_000]
    assert d["map_cut_1000000000"].tolist() == [1.0] and d["relative_P_1000000000"].tolist() == [1.0]


@pytest.mark.parametrize("grade,exit_code", [("9" * 25, EXIT_TOPIC), ("9" * 5000, EXIT_TOPIC)])
def test_trec_grade_past_64_bits_exits_as_trec_eval(tmp_path, grade, exit_code):
    # trec_eval 10.0: "Can't calculate measure", exit 4 (a grade below -2**63 saturates, as atol does)
    qrels = write(tmp_path, "q", f"q1 0 d1 {grade}\n")
    with pytest.raises(TrecInputError, match=r"q, line 1, field \"rel\": relevance grade of \d+ digits") as info:
        read_qrels(str(qrels))
    assert info.value.exit_code == exit_code
    assert read_qrels(str(write(tmp_path, "n", f"q1 0 d1 -{'9' * 30}\n"))).table["rel"].to_pylist() == [-2 ** 63]


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


@pytest.mark.parametrize("name,text,words", [
    ("c.json", "{", r"c.json, line 1: not valid JSON"),
    ("c.json", '{"criteria": ' + "[" * 100_000, "JSON nested too deeply"),
    ("c.json", '{"criteria": [' + "9" * 5000 + "]}", "a number is too long"),
    ("c.json", b"\xff\xfe", "not valid UTF-8"),
    ("c.json", "", "the file is empty"),
    ("c.yaml", "criteria: [a, b\n  - c: d: e\n", r"c.yaml, line \d+: not valid YAML"),
    ("c.json", '{"criteria": [{"name": "x", "description": "d", "examples": 3}]}', 'field "examples"'),
    ("c.json", '{"criteria": [{"name": "x", "description": "d"}, {"name": "x", "description": "e"}]}',
     "two criteria have this name"),
])
def test_criteria_file_errors_are_located(tmp_path, name, text, words):
    p = write(tmp_path, name, text)
    with pytest.raises(InvalidInputError, match=words):
        load_criteria(p)
    with pytest.raises(InvalidInputError):
        load_criteria(tmp_path / "missing.json")


def test_labels_file_refuses_non_finite_and_huge_numbers(tmp_path):
    p = write(tmp_path, "l.jsonl", '{"id": "q1", "faithfulness": ' + "9" * 400 + "}\n")
    with pytest.raises(InvalidInputError, match=r"l.jsonl, line 1 \(id \"q1\"\), field \"faithfulness\""):
        load_labels(p)
    p = write(tmp_path, "l.csv", "id,faithfulness\nq1,inf\n")
    with pytest.raises(InvalidInputError, match="not a finite number"):
        load_labels(p)


def test_expected_format_regex_that_does_not_compile_is_located():
    with pytest.raises(InvalidInputError, match=r'record "q7", field "metadata.expected_format.regex": the regex'):
        format_problem("an answer", {"regex": "("}, sample="q7")


def test_catastrophic_regex_is_cut_off():
    # (a|aa)+$ on 60 a's and a '!' backtracks fib(60) times in the standard library's re
    start = time.monotonic()
    with pytest.raises(InvalidInputError, match=r"did not finish within"):
        format_problem("a" * 60 + "!", {"regex": "(a|aa)+$"}, sample="q1")
    assert time.monotonic() - start < REGEX_TIMEOUT_S + 10
    assert format_problem("ok 42", {"regex": r"\d+"}, sample="q1") is None
