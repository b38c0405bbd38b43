"""``ragmeter.core.history``: a conversation turn's history, stored once per conversation and
referenced by each turn (issue 38: a 4,000-turn conversation took 48.7 s and 3.3 GB, and a
1,000-turn one wrote a 202 MB samples.jsonl)."""

from __future__ import annotations

import json
import pickle

import pytest

import ragmeter
from ragmeter.core.history import LineLedger, TurnHistory, from_written, plain, written
from ragmeter.io.dataset import Fingerprints
from ragmeter.runs import list_runs


def conversation(n: int, pad: int = 40) -> dict:
    return {"id": "c1", "turns": [{"question": f"q{i} " + "x" * pad, "answer": f"a{i} " + "y" * pad,
                                   "retrieved": [{"id": f"c{i % 5}", "text": "text"}], "relevant": [f"c{i % 5}"]}
                                  for i in range(n)]}


def expected_history(i: int, pad: int = 40) -> str:
    """Turn i+1's history as ragmeter always wrote it: every earlier exchange, one line each."""
    lines = [line for k in range(i) for line in (f"User: q{k} " + "x" * pad, f"Assistant: a{k} " + "y" * pad)]
    return "\n".join(lines) or "(none)"


def test_a_turn_history_is_the_string_it_stands_for():
    lines = ["User: one", "Assistant: two"]
    h = TurnHistory(lines, 2)
    assert h == "User: one\nAssistant: two" and str(h) == "User: one\nAssistant: two" and "two" in h
    assert h.split("\n") == lines and h.startswith("User:") and len(h) == len("User: one\nAssistant: two")
    assert TurnHistory(lines, 0) == "(none)" and plain(h) == str(h) and plain(5) == 5
    assert pickle.loads(pickle.dumps(h)) == h
    with pytest.raises(ValueError):
        TurnHistory(lines, 3)


def test_each_turn_references_one_list_of_lines(tmp_path):
    data = tmp_path / "conv.jsonl"
    data.write_text(json.dumps(conversation(50)) + "\n")
    samples = ragmeter.load_dataset(data).samples
    histories = [s.metadata["history"] for s in samples]
    assert all(isinstance(h, TurnHistory) for h in histories)
    assert len({id(h.lines) for h in histories}) == 1 and len(histories[0].lines) == 100  # 2 lines a turn, not n^2
    assert [str(h) for h in histories] == [expected_history(i) for i in range(50)]


def test_each_line_is_written_once_and_read_back_in_order():
    lines = [f"line {i}" for i in range(6)]
    ledger = LineLedger()
    out = [written(ledger, TurnHistory(lines, n)) for n in (0, 2, 4, 3, 6)]
    assert [o["new_lines"] for o in out] == [[], lines[:2], lines[2:4], [], lines[4:]]
    keyed: dict[int, list[str]] = {}
    back = [from_written(keyed, json.loads(json.dumps(o))) for o in out]
    assert [str(h) for h in back] == ["(none)", *["\n".join(lines[:n]) for n in (2, 4, 3, 6)]]
    assert from_written(keyed, {"conversation": 0}) == {"conversation": 0}  # not ours: as it is


def test_the_fingerprint_counts_every_line_once_and_still_sees_a_change(tmp_path):
    data = tmp_path / "conv.jsonl"
    data.write_text(json.dumps(conversation(20)) + "\n")
    first = ragmeter.load_dataset(data)
    changed = conversation(20)
    changed["turns"][3]["answer"] = "a different answer"  # turn 4's answer: in turn 5's history and after
    data.write_text(json.dumps(changed) + "\n")
    second = ragmeter.load_dataset(data)
    assert first.fingerprint != second.fingerprint and first.testset_fingerprint == second.testset_fingerprint
    f = Fingerprints()
    for s in first.samples:
        f.add(s)
    assert f.digests()[0] == first.fingerprint


def test_a_run_writes_each_history_line_once_and_reads_the_histories_back(cli, tmp_path, runs_dir):
    data = tmp_path / "conv.jsonl"
    n = 400
    data.write_text(json.dumps(conversation(n, pad=200)) + "\n")
    assert cli("eval", data, "-m", "recall@5").exit_code == 0
    (run,) = list_runs(runs_dir)
    size = (run.path / "samples.jsonl").stat().st_size
    assert size < 3 * data.stat().st_size  # each history whole: n/2 times the conversation
    read = run.samples()
    assert [str(s.metadata["history"]) for s in read] == [expected_history(i, pad=200) for i in range(n)]
    assert ragmeter.load_dataset(run.path / "samples.jsonl").fingerprint == ragmeter.load_dataset(data).fingerprint
