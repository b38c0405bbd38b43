"""``ragmeter.analysis.pairwise``: Pairwise preference between two systems' answers, asked in both orders."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from ragmeter import InvalidInputError
from ragmeter.analysis.pairwise import binomial_two_sided, pairwise
from ragmeter.core.sample import Chunk, Sample
from ragmeter.io.rows import make_samples
from ragmeter.judges import Judge, ScriptedBackend
from tests import judge_server


def test_pairwise_without_common_ids_is_an_error(cli, tmp_path):
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    a.write_text(json.dumps({"id": "q1", "question": "Q?", "answer": "x"}) + "\n")
    b.write_text(json.dumps({"id": "other", "question": "Q?", "answer": "y"}) + "\n")
    out = cli("pairwise", a, b, "--judge", "openai:m", "--judge-base-url", "http://127.0.0.1:9/v1",
              "--ledger", tmp_path / "l.sqlite")
    assert out.exit_code == 2 and "no sample id has an answer in both A" in out.output, out.output
    with pytest.raises(InvalidInputError):
        pairwise(make_samples([(1, {"id": "q1", "answer": "x"})], "a"), [], judge=None)  # no call is made


def sample(sid="s", answer="The R2 warranty lasts 24 months [1].", question="How long is the R2 warranty?"):
    return Sample(id=sid, question=question, answer=answer,
                  retrieved=(Chunk("c1", text="The R2 has a 24-month warranty."),
                             Chunk("c2", text="Returns: 30 days.")))


def _pair_samples(n=12):
    a = [sample(f"q{i}", answer=f"The warranty lasts 24 months{' indeed' * (i % 3)}.") for i in range(n)]
    b = [sample(f"q{i}", answer=f"It is 24 months, see the R2 page for the details and the exclusions{'!' * i}.")
         for i in range(n)]
    return a, b


def test_a_judge_that_always_picks_the_first_answer_is_caught():
    a, b = _pair_samples()
    result = pairwise(a, b, Judge(ScriptedBackend(lambda pid, inputs, m: {"winner": "1", "reason": "first"})))
    d = result.as_dict()
    assert d["ties"] == 12 and d["wins"] == d["losses"] == 0 and d["position_bias_rate"] == 1.0


def test_a_judge_that_prefers_the_longer_answer_is_caught():
    a, b = _pair_samples()

    def longer(pid, inputs, m):
        return {"winner": "1" if len(inputs["answer_1"]) > len(inputs["answer_2"]) else "2", "reason": "longer"}
    d = pairwise(a, b, Judge(ScriptedBackend(longer))).as_dict()
    assert d["wins"] == 12 and d["position_bias_rate"] == 0.0
    assert d["length_bias"]["longer_won"] == 12 and d["length_bias"]["p"] < 0.001
    assert d["win_rate"] == 1.0 and d["win_rate_ci95"] == [1.0, 1.0]


def test_binomial_two_sided():
    assert binomial_two_sided(12, 12) == pytest.approx(2 / 2 ** 12)
    assert binomial_two_sided(3, 6) == pytest.approx(1.0)
    assert binomial_two_sided(1, 6) == pytest.approx(stats.binomtest(1, 6).pvalue)


def test_pairwise_command_over_http(cli, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Q{i}?", "answer": "short",
                                        "metadata": {"answer_b": "a much longer answer"}}) + "\n" for i in range(4)))
    srv, state = judge_server.start(lambda text, payload: {"winner": "2", "reason": "second"})
    try:
        out = cli("pairwise", data, "--b-field", "answer_b", "--judge", "openai:m", "--judge-base-url",
                  state.url + "/v1", "--ledger", tmp_path / "l.sqlite")
        assert out.exit_code == 0, out.output
        assert "0 wins, 4 ties, 0 losses" in out.stdout and "position bias: 1.000" in out.stdout
        assert state.count == 8  # both orders for each question
    finally:
        srv.shutdown()


def test_pairwise_takes_a_run_by_the_name_runs_lists(cli, tmp_path, runs_dir, monkeypatch):
    """`show`, `compare` and `gate` take a run's name; pairwise read the name as a dataset file
    ("unknown dataset format '(no extension)'")."""
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Q{i}?", "answer": "short",
                                        "metadata": {"answer_b": "a much longer answer"}}) + "\n" for i in range(2)))
    from ragmeter.runs import list_runs

    assert cli("eval", data, "-m", "semantic_similarity", "--judge", "none").exit_code == 0
    (run,) = list_runs(runs_dir)
    monkeypatch.setenv("RAGMETER_RUNS_DIR", str(runs_dir))
    srv, state = judge_server.start(lambda text, payload: {"winner": "2", "reason": "second"})
    try:
        out = cli("pairwise", run.name, "--b-field", "answer_b", "--judge", "openai:m", "--judge-base-url",
                  state.url + "/v1", "--ledger", tmp_path / "l.sqlite")
        assert out.exit_code == 0, out.output
        assert "0 wins, 2 ties, 0 losses" in out.stdout and state.count == 4
    finally:
        srv.shutdown()


# Calibration with pairs people judged (the metric reference: "always include human-labeled examples")

V1_USER = "QUESTION:\n{question}\n\nCONTEXT:\n{context}\n\nANSWER 1:\n{one}\n\nANSWER 2:\n{two}\n\n" \
          'Return "winner": "1", "2" or "tie", and a one-sentence "reason".'


def test_without_examples_the_judge_reads_the_first_prompt_word_for_word():
    a, b = _pair_samples(1)
    backend = ScriptedBackend(lambda pid, inputs, m: {"winner": "tie", "reason": "same"})
    seen = []
    backend.respond = lambda pid, inputs, m: seen.append(m) or {"winner": "tie", "reason": "same"}
    pairwise(a, b, Judge(backend))
    assert seen[0][1]["content"] == V1_USER.format(question=a[0].question, context=
                                                   "[c1] The R2 has a 24-month warranty.\n[c2] Returns: 30 days.",
                                                   one=a[0].answer, two=b[0].answer)


def test_human_examples_reach_every_request_in_both_orders():
    from ragmeter.analysis.pair_examples import PairExample

    shots = [PairExample("Is my R2 covered?", "Yes: 24 months from purchase.", "Yes, and shipping is free.", "1",
                         "answer 2 adds a claim the context does not make")]
    a, b = _pair_samples(3)
    seen = []

    def respond(pid, inputs, m):
        seen.append(m[1]["content"])
        return {"winner": "1", "reason": "first"}
    result = pairwise(a, b, Judge(ScriptedBackend(respond)), examples=shots)
    assert len(seen) == 6 and all(text.startswith(
        "EXAMPLES WITH HUMAN VERDICTS (people compared these answers):\n- question: Is my R2 covered? | answer 1: Yes: "
        "24 months from purchase. | answer 2: Yes, and shipping is free. | winner: 1 (answer 2 adds a claim the "
        "context does not make)\n\nQUESTION:\n") for text in seen)
    assert result.as_dict()["human_examples"] == 1


def test_pairwise_command_takes_an_examples_file(cli, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Q{i}?", "answer": "short",
                                        "metadata": {"answer_b": "a much longer answer"}}) + "\n" for i in range(2)))
    shots = tmp_path / "pairs.json"
    shots.write_text(json.dumps({"examples": [{"question": "Q?", "answer_1": "short", "answer_2": "long and padded",
                                               "winner": "1"}]}))
    texts = []
    srv, state = judge_server.start(lambda text, payload: texts.append(text) or {"winner": "tie", "reason": "same"})
    try:
        out = cli("pairwise", data, "--b-field", "answer_b", "--judge", "openai:m", "--judge-base-url",
                  state.url + "/v1", "--ledger", tmp_path / "l.sqlite", "--examples", shots)
        assert out.exit_code == 0, out.output
        assert "the judge was shown 1 pair people judged" in out.stdout
        assert len(texts) == 4 and all("| winner: 1\n\nQUESTION:" in t for t in texts)
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({"examples": [{"answer_1": "x", "answer_2": "y", "winner": "A"}]}))
        out = cli("pairwise", data, "--b-field", "answer_b", "--judge", "openai:m", "--judge-base-url",
                  state.url + "/v1", "--ledger", tmp_path / "l.sqlite", "--examples", bad)
        assert out.exit_code == 2 and "row 1, field \"winner\"" in out.output, out.output
        assert len(texts) == 4  # refused before any call
    finally:
        srv.shutdown()
