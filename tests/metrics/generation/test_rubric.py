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
