"""``ragmeter.metrics.generation.groundedness``: Ragas's Response Groundedness, two judges'
ratings (0, 1, 2) rescaled by r / 2 and averaged."""

from __future__ import annotations

import pytest

import ragmeter
from ragmeter.core.sample import Chunk, Sample
from ragmeter.judges import Judge, ScriptedBackend

Q1_ANSWER = ("Yes, your R2 is still under warranty. It carries a 24-month limited hardware warranty, so a failure "
             "at 14 months falls inside the warranty period. Open a case with your serial number and proof of "
             "purchase, and a replacement ships within 2 business days. Shipping is free.")


def q1(warranty):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    return data.samples[0]


def rating_judge(ratings):
    """Rates with ``ratings[prompt id]`` (a number, or a reply that is not a rating)."""
    backend = ScriptedBackend(lambda pid, inputs, messages: {"rating": ratings[pid]} if isinstance(
        ratings[pid], int) else ratings[pid])
    return Judge(backend, max_reasks=0), backend


def test_seed_q1_partly_grounded_by_both_judges(warranty):
    """q1's answer changes a detail (2 business days) and adds one (free shipping): each judge
    rates it 1, partly supported: (1/2 + 1/2) / 2."""
    judge, backend = rating_judge({"groundedness.judge1": 1, "groundedness.judge2": 1})
    r = ragmeter.evaluate([q1(warranty)], ["response_groundedness"], judge=judge)
    assert r.values("response_groundedness") == [pytest.approx((1 / 2 + 1 / 2) / 2)]
    assert sorted(pid for pid, _ in backend.seen) == ["groundedness.judge1", "groundedness.judge2"]
    inputs = backend.seen[0][1]
    assert inputs["response"] == Q1_ANSWER
    assert inputs["context"].splitlines()[1] == ("The R2 router carries a 24-month limited hardware warranty from "
                                                 "the date of purchase.")  # the passages joined, in prompt order


def test_the_two_ratings_are_rescaled_and_averaged():
    judge, _ = rating_judge({"groundedness.judge1": 2, "groundedness.judge2": 1})
    sample = Sample(id="s", question="Q?", answer="The R2 has a 24-month warranty.",
                    retrieved=(Chunk("c1", text="The R2 router carries a 24-month warranty."),))
    r = ragmeter.evaluate([sample], ["response_groundedness"], judge=judge)
    assert r.values("response_groundedness") == [pytest.approx((2 / 2 + 1 / 2) / 2)]
    prov = r["response_groundedness"][0].provenance
    assert set(prov.judge["prompts"]) == {"groundedness.judge1", "groundedness.judge2"}


def test_no_answer_or_no_context_is_not_computed_without_a_call():
    judge, backend = rating_judge({})
    samples = [Sample(id="a", question="Q?", answer=None, retrieved=(Chunk("c1", text="x"),)),
               Sample(id="b", question="Q?", answer="Yes.", retrieved=())]
    r = ragmeter.evaluate(samples, ["response_groundedness"], judge=judge)
    assert [o.reason for o in r["response_groundedness"]] == ["the sample has no answer", "the context is empty"]
    assert backend.calls == 0


def test_a_rating_off_the_scale_fails_the_sample_never_half_scored():
    judge, _ = rating_judge({"groundedness.judge1": 2, "groundedness.judge2": {"rating": 3}})
    sample = Sample(id="s", question="Q?", answer="Yes.", retrieved=(Chunk("c1", text="Yes."),))
    r = ragmeter.evaluate([sample], ["response_groundedness"], judge=judge)
    assert r["response_groundedness"][0].status == "failed"


def test_groundedness_stays_the_alias_of_faithfulness():
    assert str(ragmeter.parse_measure("groundedness")) == "faithfulness"
    assert str(ragmeter.parse_measure("nv_response_groundedness")) == "response_groundedness"
