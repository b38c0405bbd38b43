"""``ragmeter.metrics.generation.citations``: Citation recall and precision (ALCE, Gao et al. 2023),
read from the shared claim matrix."""

from __future__ import annotations

import pytest

import ragmeter
from ragmeter.core.sample import Chunk, Sample
from ragmeter.judges import Judge, ScriptedBackend


def sample(sid="s", answer="The R2 warranty lasts 24 months [1].", question="How long is the R2 warranty?"):
    return Sample(id=sid, question=question, answer=answer,
                  retrieved=(Chunk("c1", text="The R2 has a 24-month warranty."),
                             Chunk("c2", text="Returns: 30 days.")))


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


# Attribution accuracy: each citing claim against only the passages it cites.

TEXTS = {"c1": "The R2 has a 24-month warranty.", "c2": "It covers hardware faults."}
CLAIMS = [("The R2 warranty lasts 24 months.", ["1"]),  # c1 says it
          ("The 24-month warranty covers hardware faults.", ["1"]),  # c1 and c2 together say it; c1 alone does not
          ("Returns are free.", ["c2"]),  # c2 does not say it
          ("It is great.", [])]  # cites nothing
# against the whole context: (verdict, sources, combined)
IN_CONTEXT = {1: ("supported", ["c1"], False), 2: ("supported", ["c1", "c2"], True), 3: ("not_found", [], False),
              4: ("not_found", [], False)}
# against the cited passages alone, by the passages shown
ALONE = {("c1",): {1: ("supported", ["c1"]), 2: ("not_found", [])}, ("c2",): {3: ("not_found", [])}}


def attribution_judge(fail_on=None):
    def respond(pid, inputs, messages):
        if pid == "claims.extract":
            return {"claims": [{"id": i, "text": t, "addresses_question": True, "cites": cites}
                               for i, (t, cites) in enumerate(CLAIMS, start=1)],
                    "declines": False, "reference_claims": []}
        shown = tuple(c for c in TEXTS if f"[{c}]" in inputs["evidence"])
        ids = [int(line.split(".")[0]) for line in inputs["claims"].splitlines()]
        if shown == fail_on:
            return "not JSON"
        if len(shown) == 2:
            return {"verdicts": [{"id": i, "verdict": IN_CONTEXT[i][0], "sources": IN_CONTEXT[i][1],
                                  "combined": IN_CONTEXT[i][2], "quote": ""} for i in ids]}
        return {"verdicts": [{"id": i, "verdict": ALONE[shown][i][0], "sources": ALONE[shown][i][1],
                              "combined": False, "quote": ""} for i in ids]}
    backend = ScriptedBackend(respond)
    return Judge(backend, max_reasks=0), backend


def attributed_sample():
    return Sample(id="s", question="What does the R2 warranty cover?", answer="(the claims above)",
                  retrieved=tuple(Chunk(c, text=t) for c, t in TEXTS.items()))


def test_attribution_accuracy_reads_each_claim_against_its_cited_passages_alone():
    judge, backend = attribution_judge()
    r = ragmeter.evaluate([attributed_sample()], ["attribution_accuracy", "citation_recall", "citation_precision"],
                          judge=judge)
    assert r.values("attribution_accuracy") == [pytest.approx(1 / 3)]  # of the 3 citing claims, only claim 1
    assert r.values("citation_recall") == [pytest.approx(2 / 4)]  # claim 2 counts: c1 is among its passages
    assert r.values("citation_precision") == [pytest.approx(2 / 3)]
    # extraction, the claims against the context, then one call per set of passages cited ({c1}, {c2})
    assert backend.calls == 1 + 1 + 2
    cited_calls = [i for pid, i in backend.seen if pid == "claims.verify" and i["evidence"].count("\n") == 0]
    assert sorted(i["claims"].count("\n") + 1 for i in cited_calls) == [1, 2]


def test_attribution_alone_asks_no_verdict_against_the_whole_context():
    judge, backend = attribution_judge()
    r = ragmeter.evaluate([attributed_sample()], ["attribution_accuracy"], judge=judge)
    assert r.values("attribution_accuracy") == [pytest.approx(1 / 3)] and backend.calls == 1 + 2


def test_a_marker_naming_no_passage_is_an_inaccurate_attribution_without_a_call():
    def respond(pid, inputs, messages):
        if pid == "claims.extract":
            return {"claims": [{"id": 1, "text": "The R2 warranty lasts 24 months.", "addresses_question": True,
                                "cites": ["9"]}], "declines": False, "reference_claims": []}
        raise AssertionError("no passage is cited: nothing to verify")
    backend = ScriptedBackend(respond)
    r = ragmeter.evaluate([attributed_sample()], ["attribution_accuracy"], judge=Judge(backend))
    assert r.values("attribution_accuracy") == [0.0] and backend.calls == 1


def test_a_failed_group_fails_the_sample_and_an_answer_citing_nothing_is_not_computed():
    judge, _ = attribution_judge(fail_on=("c2",))
    r = ragmeter.evaluate([attributed_sample()], ["attribution_accuracy"], judge=judge)
    assert r["attribution_accuracy"][0].status == "failed"
    judge, _ = judge_citing_nothing()
    r = ragmeter.evaluate([sample()], ["attribution_accuracy"], judge=judge)
    assert r["attribution_accuracy"][0].reason == "the answer cites nothing"


def judge_citing_nothing():
    def respond(pid, inputs, messages):
        return {"claims": [{"id": 1, "text": "x", "addresses_question": True, "cites": []}], "declines": False,
                "reference_claims": []}
    backend = ScriptedBackend(respond)
    return Judge(backend), backend
