"""``ragmeter.evidence.groundedness_ratings``: two rating calls per answered sample, read into the
evidence; a judge that does not serve the prompts leaves the metric not computed, with its reason."""

from __future__ import annotations

import asyncio

import ragmeter
from ragmeter.core.sample import Chunk, Sample
from ragmeter.evidence.matrix import GROUNDEDNESS, Unavailable
from ragmeter.evidence.planner import agather_evidence
from ragmeter.evidence.sources import Sources
from ragmeter.judges import Judge, ScriptedBackend

SAMPLE = Sample(id="s", question="Q?", answer="Ships in 5 days.",
                retrieved=(Chunk("a", text="A 24-month warranty."), Chunk("b", text="Ships in 5 days.")))


def test_both_ratings_are_asked_in_the_extraction_stage_and_kept_by_prompt():
    backend = ScriptedBackend(lambda pid, inputs, messages: {"rating": {"groundedness.judge1": 2}.get(pid, 1)})
    [ev] = asyncio.run(agather_evidence([SAMPLE], {GROUNDEDNESS}, Sources(judge=Judge(backend))))
    assert ev.groundedness == {"groundedness.judge1": 2, "groundedness.judge2": 1}
    assert backend.seen[0][1] == {"context": "A 24-month warranty.\nShips in 5 days.", "response": "Ships in 5 days."}
    assert ev.as_dict()["groundedness"] == {"groundedness.judge1": 2, "groundedness.judge2": 1}


def test_the_two_prompts_word_the_same_scale_differently():
    from ragmeter.judges import load_prompt

    one, two = load_prompt("groundedness.judge1"), load_prompt("groundedness.judge2")
    assert one.system != two.system and one.placeholders == two.placeholders == {"context", "response"}
    for prompt in (one, two):
        assert all(f"{r}" in prompt.system for r in (0, 1, 2))


def test_a_judge_that_refuses_the_prompts_is_not_asked():
    class Refusing(ScriptedBackend):
        def refuses(self, prompt_id):
            return "not measured" if prompt_id.startswith("groundedness.") else None

    backend = Refusing(lambda *a: {"rating": 2})
    r = ragmeter.evaluate([SAMPLE], ["response_groundedness"], judge=Judge(backend))
    assert r["response_groundedness"][0].reason == "not measured" and backend.calls == 0


def test_a_failed_rating_is_unavailable_and_marked_failed():
    backend = ScriptedBackend(lambda pid, inputs, messages: "no rating")
    [ev] = asyncio.run(agather_evidence([SAMPLE], {GROUNDEDNESS}, Sources(judge=Judge(backend, max_reasks=0))))
    assert all(isinstance(v, Unavailable) and v.failed for v in ev.groundedness.values())


def test_a_request_that_retrieved_several_times_is_rated_against_what_the_answer_was_written_from():
    from ragmeter.core.sample import Chunk as C

    several = Sample(id="r#2", question="Q?", answer="Ships in 5 days.", retrieved=(C("b", text="Ships in 5 days."),),
                     answer_context=(C("a", text="A 24-month warranty."), C("b", text="Ships in 5 days.")))
    backend = ScriptedBackend(lambda pid, inputs, messages: {"rating": 2})
    asyncio.run(agather_evidence([several], {GROUNDEDNESS}, Sources(judge=Judge(backend))))
    assert backend.seen[0][1]["context"] == "A 24-month warranty.\nShips in 5 days."
