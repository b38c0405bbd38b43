"""``ragmeter.evidence.cited_passages``: each citing answer claim verified against only the passages
it cites, one call per set of passages cited."""

from __future__ import annotations

import asyncio

from ragmeter.core.sample import Chunk, Sample
from ragmeter.evidence.matrix import CITED, Claim, Evidence
from ragmeter.evidence.planner import agather_evidence, plan_calls
from ragmeter.evidence.sources import Sources
from ragmeter.judges import Judge, NoCallBackend, ScriptedBackend

SAMPLE = Sample(id="s", question="Q?", answer="24 months [1]. Five days [b]. Free shipping [1][b]. Nice.",
                retrieved=(Chunk("a", text="A 24-month warranty."), Chunk("b", text="Ships in 5 days.")))


def test_claims_are_grouped_by_the_passages_they_cite_and_shown_only_those():
    def respond(pid, inputs, messages):
        if pid == "claims.extract":
            return {"claims": [{"id": i, "text": t, "addresses_question": True, "cites": c} for i, (t, c) in
                               enumerate([("24 months.", ["1"]), ("Five days.", ["b"]), ("Free.", ["1", "b"]),
                                          ("Nice.", []), ("Ten days.", ["[2]"])], start=1)],
                    "declines": False, "reference_claims": []}
        ids = [int(line.split(".")[0]) for line in inputs["claims"].splitlines()]
        return {"verdicts": [{"id": i, "verdict": "supported", "sources": [], "combined": False, "quote": ""}
                             for i in ids]}
    backend = ScriptedBackend(respond)
    [ev] = asyncio.run(agather_evidence([SAMPLE], {CITED}, Sources(judge=Judge(backend))))
    asked = sorted((i["evidence"], i["claims"]) for pid, i in backend.seen if pid == "claims.verify")
    assert asked == [("[a] A 24-month warranty.", "1. 24 months."),
                     ("[a] A 24-month warranty.\n[b] Ships in 5 days.", "3. Free."),
                     ("[b] Ships in 5 days.", "2. Five days.\n5. Ten days.")]  # [2] and [b] name one chunk
    assert [v.claim for v in ev.verdicts[CITED]] == [1, 2, 3, 5]  # claim 4 cites nothing


def test_a_dry_run_counts_one_call_per_set_of_passages_the_sentences_cite():
    plan = plan_calls([SAMPLE], {CITED}, Sources(judge=Judge(NoCallBackend())))
    # the answer's sentences stand in for its claims: [1], [b], and [1][b] are three sets
    assert plan["calls_by_prompt"] == {"claims.extract": 1, "claims.verify": 3}


def test_without_claims_the_reason_is_kept():
    from ragmeter.evidence.cited_passages import CitedPassages
    from ragmeter.evidence.matrix import Unavailable

    provider = CitedPassages(frozenset({CITED}), Sources(judge=Judge(NoCallBackend())))
    ev = Evidence(answer_claims=Unavailable("the sample has no answer"))
    assert provider.requests("verification", SAMPLE, ev, lambda need: False) == {}
    assert ev.verdicts[CITED] == Unavailable("the sample has no answer")
    ev = Evidence(answer_claims=(Claim(1, "x"),))
    assert provider.requests("verification", SAMPLE, ev, lambda need: False) == {} and ev.verdicts[CITED] == ()


def test_markers_number_the_chunks_the_answer_was_written_from():
    """A request that retrieved twice: [1] is the first retrieval's chunk, not the last one's."""
    several = Sample(id="r#2", question="Q?", answer="24 months [1].", retrieved=(Chunk("b", text="Ships in 5 days."),),
                     answer_context=(Chunk("a", text="A 24-month warranty."), Chunk("b", text="Ships in 5 days.")))

    def respond(pid, inputs, messages):
        if pid == "claims.extract":
            return {"claims": [{"id": 1, "text": "24 months.", "addresses_question": True, "cites": ["1"]}],
                    "declines": False, "reference_claims": []}
        return {"verdicts": [{"id": 1, "verdict": "supported", "sources": ["a"], "combined": False, "quote": ""}]}
    backend = ScriptedBackend(respond)
    asyncio.run(agather_evidence([several], {CITED}, Sources(judge=Judge(backend))))
    assert [i["evidence"] for pid, i in backend.seen if pid == "claims.verify"] == ["[a] A 24-month warranty."]
