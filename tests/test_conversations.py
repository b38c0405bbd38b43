"""Conversations: the accepted shapes, per-turn scoring with the history, standalone turns,
and scores by turn index."""

from __future__ import annotations

import json

import pytest

import ragmeter
from ragmeter.analysis.turns import by_turn
from ragmeter.judges import Judge, ScriptedBackend

NATIVE = {"id": "c1", "turns": [
    {"question": "How long is the R2 warranty?", "retrieved": ["w2", "w1"], "relevant": ["w2"],
     "answer": "24 months."},
    {"question": "And the other one?", "retrieved": ["w2", "w1"], "relevant": ["w1"], "answer": "12 months.",
     "standalone": False},
    {"question": "Can I get the R3 in blue?", "retrieved": ["x"], "relevant": {}, "answerable": False,
     "answer": "I don't know."},
]}


def write(tmp_path, *records):
    p = tmp_path / "conv.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return p


def test_turns_become_samples_with_history(tmp_path):
    data = ragmeter.load_dataset(write(tmp_path, NATIVE))
    assert [s.id for s in data] == ["c1#1", "c1#2", "c1#3"]
    second = data.samples[1]
    assert second.metadata["turn"] == 2 and second.metadata["standalone"] is False
    assert second.metadata["history"] == "User: How long is the R2 warranty?\nAssistant: 24 months."
    assert data.samples[2].answerable is False
    r = ragmeter.evaluate(data, ["reciprocal_rank"])
    assert r.values("reciprocal_rank@5") == [1.0, 0.5, None]


def test_deepeval_ragas_and_mtrag_shapes(tmp_path):
    deepeval = {"id": "d", "turns": [
        {"role": "user", "content": "Q1?"}, {"role": "assistant", "content": "A1.", "retrieval_context": ["t1", "t2"]},
        {"role": "user", "content": "Q2?"}, {"role": "assistant", "content": "A2.", "retrieval_context": []}]}
    ragas = {"id": "r", "user_input": [{"type": "human", "content": "Hi?"}, {"type": "ai", "content": "Hello."}],
             "reference": "Hello there."}
    # MTRAG tasks as the benchmark writes them (the invented "turn_id"/"messages" rows are gone: a
    # "messages" record is a whole MTRAG conversation); the gold "targets" are the reference, not
    # the answer (tests/io/test_mtrag.py reads the published file)
    mtrag = [{"conversation_id": "m", "task_id": "m::2", "turn": 2,
              "input": [{"speaker": "user", "text": "First?"}, {"speaker": "agent", "text": "One."},
                        {"speaker": "user", "text": "Second?"}],
              "contexts": [{"document_id": "doc9", "text": "Nine."}], "targets": [{"text": "Two."}],
              "answerability": ["UNANSWERABLE"]},
             {"conversation_id": "m", "task_id": "m::1", "turn": 1, "input": [{"speaker": "user", "text": "First?"}],
              "contexts": [], "predictions": [{"text": "One."}]}]
    data = ragmeter.load_dataset(write(tmp_path, deepeval, ragas, *mtrag))
    by_id = {s.id: s for s in data}
    assert by_id["d#1"].answer == "A1." and by_id["d#1"].retrieved[1].text == "t2"
    assert by_id["r#1"].reference == "Hello there."
    assert by_id["m::1"].question == "First?" and by_id["m::2"].question == "Second?"
    assert by_id["m::2"].answerable is False and by_id["m::2"].retrieved_ids == ("doc9",)
    assert by_id["m::2"].answer is None and by_id["m::2"].reference == "Two."
    assert by_id["m::1"].answer == "One." and "Assistant: One." in by_id["m::2"].metadata["history"]


def test_extraction_sees_the_history_and_standalone_costs_calls_only_when_needed(tmp_path):
    seen = []

    def respond(pid, inputs, messages):
        seen.append((pid, inputs))
        if pid == "turn.standalone":
            return {"standalone": False}
        return {"claims": [{"id": 1, "text": "x", "addresses_question": True, "cites": []}],
                "declines": "know" in inputs["answer"], "reference_claims": []}
    conv = json.loads(json.dumps(NATIVE))
    del conv["turns"][1]["standalone"]
    data = ragmeter.load_dataset(write(tmp_path, conv))
    r = ragmeter.evaluate(data, ["standalone_question", "answer_relevancy", "negative_rejection"],
                          judge=Judge(ScriptedBackend(respond)))
    assert r.values("standalone_question") == [1.0, 0.0, 0.0]
    standalone_calls = [i for p, i in seen if p == "turn.standalone"]
    assert len(standalone_calls) == 2  # turn 1 needs none
    extract = [i for p, i in seen if p == "claims.extract"]
    assert extract[1]["history"].startswith("User: How long is the R2 warranty?")
    assert r.values("negative_rejection") == [None, None, 1.0]  # the unanswerable turn declined


def test_scores_by_turn_and_standalone(tmp_path):
    convs = [{"id": f"c{i}", "turns": [
        {"question": "q", "retrieved": ["a", "b"], "relevant": ["a"]},
        {"question": "q2", "retrieved": ["b", "a"], "relevant": ["a"], "standalone": i % 2 == 0},
        {"question": "q3", "retrieved": ["b", "c", "a"], "relevant": ["a"], "standalone": False},
        {"question": "q4", "retrieved": ["c", "b", "a"], "relevant": ["a"], "standalone": False}]} for i in range(4)]
    data = ragmeter.load_dataset(write(tmp_path, *convs))
    result = ragmeter.evaluate(data, ["reciprocal_rank"])
    table = by_turn(data.samples, result.to_dict()["samples"])
    turns = table["turns"]
    assert list(turns) == ["1", "2", "3+"]
    assert turns["1"]["reciprocal_rank@5"] == {"mean": 1.0, "n": 4}
    assert turns["2"]["reciprocal_rank@5"]["mean"] == 0.5
    assert turns["3+"]["reciprocal_rank@5"] == {"mean": pytest.approx(1 / 3), "n": 8}
    groups = table["standalone"]
    assert groups["standalone"]["reciprocal_rank@5"]["n"] == 6
    assert groups["non-standalone"]["reciprocal_rank@5"]["n"] == 10


def test_turns_command_and_plot(cli, tmp_path, runs_dir):
    path = write(tmp_path, NATIVE)
    assert cli("eval", path, "--metrics", "reciprocal_rank").exit_code == 0
    from ragmeter.runs import list_runs

    (run,) = list_runs(runs_dir)
    svg = tmp_path / "turns.svg"
    out = cli("turns", run.path, "--svg", svg)
    assert out.exit_code == 0 and "by turn:" in out.stdout and "non-standalone" in out.stdout
    assert svg.read_text().startswith("<svg") and "turn 2" in svg.read_text()
    missing = tmp_path / "no" / "such" / "turns.svg"  # was a FileNotFoundError traceback
    out = cli("turns", run.path, "--svg", missing)
    assert out.exit_code == 2 and out.stderr.strip() == (
        f"error: {missing}: cannot write the plot (No such file or directory). "
        "Fix: give --svg a file in a folder that exists and can be written")
