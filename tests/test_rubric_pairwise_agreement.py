"""Rubric scores, pairwise preference with bias checks, citations, and agreement with humans."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

import ragmeter
from ragmeter.analysis.judge_agreement import agreement, cohen_kappa, kendall_tau_b, ppi_mean
from ragmeter.analysis.pairwise import binomial_two_sided, pairwise
from ragmeter.core.sample import Chunk, Sample
from ragmeter.judges import Judge, OpenAIBackend, RetryPolicy, ScriptedBackend
from ragmeter.metrics.generation.rubric import load_criteria

from . import judge_server


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
    crit = load_criteria(y)
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
        load_criteria(bad)
    with pytest.raises(ragmeter.InvalidParameterError, match="no criterion named 'nope'"):
        ragmeter.evaluate([sample()], ["rubric(criterion='nope')"], judge=rubric_judge())


def test_citation_recall_and_precision_from_the_claim_matrix():
    def respond(pid, inputs, messages):
        if pid == "claims.extract":
            return {"claims": [{"id": 1, "text": "The R2 warranty lasts 24 months.", "addresses_question": True,
                                "cites": ["1", "2"]},
                               {"id": 2, "text": "Returns are free.", "addresses_question": True, "cites": ["c2"]},
                               {"id": 3, "text": "It is great.", "addresses_question": False, "cites": []}],
                    "declines": False, "reference_claims": []}
        return {"verdicts": [{"id": 1, "verdict": "supported", "sources": ["c1"], "combined": False, "quote": "24"},
                             {"id": 2, "verdict": "not_found", "sources": [], "combined": False, "quote": ""},
                             {"id": 3, "verdict": "not_found", "sources": [], "combined": False, "quote": ""}]}
    backend = ScriptedBackend(respond)
    r = ragmeter.evaluate([sample()], ["citation_recall", "citation_precision", "faithfulness"], judge=Judge(backend))
    assert r.values("citation_recall") == [pytest.approx(1 / 3)]  # only claim 1 has a supporting citation
    assert r.values("citation_precision") == [pytest.approx(1 / 3)]  # of [1], [2], [c2] only [1] supports
    assert backend.calls == 2  # extraction + one verification: citations cost no extra call


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


def test_kappa_and_correlations_match_the_references():
    # Cohen's kappa on the 2x2 table [[20, 5], [10, 15]]: p_o = .7, p_e = .5 -> 0.4
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx((0.7 - 0.5) / (1 - 0.5))
    x, y = [0.1, 0.4, 0.4, 0.9, 0.3, 0.7], [0.2, 0.1, 0.5, 0.8, 0.3, 0.9]
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
    ag = agreement({f"q{i}": v for i, v in enumerate(x)}, {f"q{i}": v for i, v in enumerate(y)}, "m")
    assert ag.spearman == pytest.approx(stats.spearmanr(x, y).statistic) and ag.n == 6


def test_ppi_interval_covers_the_true_mean_at_the_stated_rate():
    covered, trials = 0, 400
    for seed in range(trials):
        rng = np.random.default_rng(seed)
        truth = rng.binomial(1, 0.6, 2000).astype(float)  # what humans would say on every sample
        judge = np.where(rng.random(2000) < 0.8, truth, 1 - truth)  # a judge right 80% of the time
        labeled = rng.choice(2000, 150, replace=False)
        theta, (lo, hi) = ppi_mean(judge, judge[labeled], truth[labeled])
        covered += lo <= truth.mean() <= hi
    assert 0.92 <= covered / trials <= 0.98


def test_agreement_command(cli, warranty, runs_dir, tmp_path):
    assert cli("eval", warranty / "dataset.jsonl", "--metrics", "hit_rate").exit_code == 0
    labels = tmp_path / "labels.csv"
    labels.write_text("id,hit_rate@5\nq1,1\nq2,1\nq3,0\nq4,1\nq5,0\n")
    from ragmeter.runs import list_runs

    (run,) = list_runs(runs_dir)
    out = cli("agreement", run.path, "--labels", labels)
    assert out.exit_code == 0 and "hit_rate@5: 5 labeled" in out.stdout and "kappa" in out.stdout
    doc = json.loads(cli("agreement", run.path, "--labels", labels, "--format", "json").stdout)
    assert doc[0]["kappa"] == pytest.approx(cohen_kappa([1, 1, 1, 1, 0], [1, 1, 0, 1, 0]))


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
