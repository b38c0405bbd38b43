"""``ragmeter.metrics.generation.rubric``: Rubric scores (G-Eval style) on user-defined or built-in criteria."""

from __future__ import annotations

import json

import pytest

import ragmeter
from ragmeter.core.sample import Chunk, Sample
from ragmeter.judges import Judge, OpenAIBackend, RetryPolicy, ScriptedBackend
from ragmeter.metrics.generation.rubric import load_rubric_criteria
from tests import judge_server


def sample(sid="s", answer="The R2 warranty lasts 24 months [1].", question="How long is the R2 warranty?"):
    return Sample(id=sid, question=question, answer=answer,
                  retrieved=(Chunk("c1", text="The R2 has a 24-month warranty."),
                             Chunk("c2", text="Returns: 30 days.")))


def rubric_judge(score=4):
    return Judge(ScriptedBackend(lambda pid, inputs, messages: {"score": score, "reason": "fine"}))


def test_rubric_plain_score_and_provenance():
    r = ragmeter.evaluate([sample()], ["rubric(criterion='relevance')", "rubric(criterion='accuracy', scale='raw')"],
                          judge=rubric_judge(4))
    assert r.values("rubric") == [0.75] and r.values("rubric(criterion='accuracy', scale='raw')") == [4.0]
    prov = r["rubric"][0].provenance.judge
    assert prov["rubric_scoring"] == "plain score" and prov["criterion"]["scale"] == [1, 5]


def test_rubric_probability_weighted_over_http():
    srv, state = judge_server.start(lambda text, payload: {"score": 4, "reason": "mostly"})
    try:
        state.queue({"score_probs": {"3": 0.1, "4": 0.6, "5": 0.3}})
        backend = OpenAIBackend("m", base_url=state.url + "/v1", api_key="k", policy=RetryPolicy(base_delay=0.01))
        r = ragmeter.evaluate([sample()], ["rubric(scale='raw')", "rubric"], judge=Judge(backend))
        weighted = 3 * 0.1 + 4 * 0.6 + 5 * 0.3
        assert r.values("rubric(scale='raw')")[0] == pytest.approx(weighted)
        assert r.values("rubric")[0] == pytest.approx((weighted - 1) / 4)
        assert state.requests[0]["payload"]["logprobs"] is True
        assert "probability-weighted" in r["rubric"][0].provenance.judge["rubric_scoring"]
        assert state.count == 1  # two variants, one judgment
    finally:
        srv.shutdown()


def test_rubric_score_outside_the_scale_fails():
    r = ragmeter.evaluate([sample()], ["rubric"], judge=rubric_judge(9))
    assert r["rubric"][0].status == "failed" and "outside 1-5" in r["rubric"][0].error


def test_custom_criteria_from_yaml_and_json(tmp_path):
    y = tmp_path / "c.yaml"
    y.write_text("criteria:\n  - name: tone\n    description: Is it polite?\n    scale: [0, 10]\n"
                 "    examples:\n      - answer: Go away.\n        score: 1\n")
    crit = load_rubric_criteria(y)
    assert crit["tone"].high == 10 and crit["tone"].examples[0]["score"] == 1
    seen = []

    def respond(pid, inputs, messages):
        seen.append(messages[1]["content"])
        return {"score": 8, "reason": "polite"}
    r = ragmeter.evaluate([sample()], ["rubric(criterion='tone')"], judge=Judge(ScriptedBackend(respond)),
                          criteria=crit)
    assert r.values("rubric(criterion='tone')") == [0.8] and "Go away." in seen[0]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"criteria": [{"name": "x", "description": "y", "scale": [5, 1]}]}))
    with pytest.raises(ragmeter.InvalidInputError, match=r'bad.json \(id "x"\), field "scale"'):
        load_rubric_criteria(bad)
    with pytest.raises(ragmeter.InvalidParameterError, match="no criterion named 'nope'"):
        ragmeter.evaluate([sample()], ["rubric(criterion='nope')"], judge=rubric_judge())


# The one-call rubric: every rubric_joint criterion of a sample in one JSON reply

def joint_judge(scores):
    seen = []

    def respond(pid, inputs, messages):
        seen.append((pid, inputs, messages))
        return {"scores": scores, "reason": "as scored"} if pid == "rubric.joint" else {"score": 3, "reason": "one"}
    backend = ScriptedBackend(respond)
    return Judge(backend, max_reasks=0), backend, seen


def test_joint_rubric_scores_every_criterion_in_one_call(tmp_path):
    crit = {"tone": ragmeter.metrics.generation.rubric.Criterion("tone", "Is it polite?", 0, 10,
                                                                ({"answer": "Go away.", "score": 1},))}
    judge, backend, seen = joint_judge({"relevance": 5, "accuracy": 2, "tone": 7})
    names = ["rubric_joint(criterion='relevance')", "rubric_joint(criterion='accuracy')",
             "rubric_joint(criterion='tone', scale='raw')"]
    r = ragmeter.evaluate([sample("a"), sample("b", answer="It is two years [1].")], names, judge=judge, criteria=crit)
    assert r.values(names[0]) == [(5 - 1) / (5 - 1)] * 2 and r.values(names[1]) == [(2 - 1) / (5 - 1)] * 2
    assert r.values(names[2]) == [7.0, 7.0]
    assert backend.calls == 2  # one per sample, not three
    listing = seen[0][1]["criteria"]
    assert listing.splitlines()[0].startswith("- accuracy: Is every statement") and "SCALE: 0 (worst) to 10" in listing
    assert "EXAMPLES WITH HUMAN SCORES:\n  - question:  | answer: Go away. | score: 1" in listing
    assert r[names[2]][0].provenance.judge["rubric_call"] == "one call for every rubric_joint criterion of the run"


def test_joint_and_per_criterion_rubrics_are_separate_judgments():
    judge, backend, seen = joint_judge({"relevance": 5, "accuracy": 1})
    r = ragmeter.evaluate([sample()], ["rubric(criterion='relevance')", "rubric(criterion='accuracy')",
                                       "rubric_joint(criterion='relevance')", "rubric_joint(criterion='accuracy')"],
                          judge=judge)
    assert sorted(pid for pid, *_ in seen) == ["rubric.joint", "rubric.score", "rubric.score"]
    assert r.values("rubric(criterion='relevance')") == [0.5]
    assert r.values("rubric_joint(criterion='relevance')") == [1.0]


def test_one_score_off_its_scale_fails_every_score_of_the_reply():
    judge, _, _ = joint_judge({"relevance": 5, "accuracy": 9})
    r = ragmeter.evaluate([sample()], ["rubric_joint(criterion='relevance')", "rubric_joint(criterion='accuracy')"],
                          judge=judge)
    for name in ("rubric_joint(criterion='relevance')", "rubric_joint(criterion='accuracy')"):
        assert r[name][0].status == "failed" and "accuracy 9 is outside 1-5" in r[name][0].error


def test_a_reply_missing_a_criterion_fails_and_no_answer_asks_nothing():
    judge, backend, _ = joint_judge({"relevance": 5})
    r = ragmeter.evaluate([sample(), sample("n", answer=None)],
                          ["rubric_joint(criterion='relevance')", "rubric_joint(criterion='accuracy')"], judge=judge)
    assert r["rubric_joint(criterion='accuracy')"][0].status == "failed"
    assert r["rubric_joint(criterion='relevance')"][1].reason == "the sample has no answer" and backend.calls == 1
    with pytest.raises(ragmeter.InvalidParameterError, match="rubric_joint: no criterion named 'nope'"):
        ragmeter.evaluate([sample()], ["rubric_joint(criterion='nope')"], judge=judge)
