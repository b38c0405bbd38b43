"""``evidence/rubric_scores.py``: one call per (sample, criterion), its score checked against the
criterion's scale, and G-Eval's probability-weighted score."""

from __future__ import annotations

import math

import pytest

from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import Unavailable
from ragmeter.evidence.rubric_criteria import BUILTIN
from ragmeter.evidence.rubric_scores import weighted_score
from tests.evidence.gathering import gather


def test_a_score_on_the_scale_is_kept_and_one_off_it_fails():
    low, high = BUILTIN["relevance"].low, BUILTIN["relevance"].high
    scores = {"a": high, "b": high + 1}

    def respond(prompt_id, inputs, messages):
        return {"score": scores["a" if "first" in inputs["answer"] else "b"], "reason": "scripted"}

    samples = [Sample(id="a", question="q", answer="first"), Sample(id="b", question="q", answer="second"),
               Sample(id="c", question="q")]
    a, b, c = gather(samples, {"rubric:relevance"}, respond)[0]
    assert a.rubric["relevance"] == {"score": high, "reason": "scripted", "weighted": None}  # no logprobs
    assert b.rubric["relevance"].failed and f"outside {low}-{high}" in b.rubric["relevance"].reason
    assert c.rubric["relevance"] == Unavailable("the sample has no answer")


def _token(text, *alternatives):
    return {"token": text, "logprob": 0.0, "top_logprobs": [{"token": t, "logprob": math.log(p)}
                                                            for t, p in alternatives]}


def test_the_weighted_score_is_the_mean_of_the_scale_under_the_scores_probabilities():
    """sum(s * p(s)) / sum(p(s)) over the scale's values at the score's token (Liu et al. 2023):
    p(4) = 0.6, p(5) = 0.3, p(9) = 0.1 off a 1-5 scale -> (4 * 0.6 + 5 * 0.3) / 0.9."""
    tokens = [{"token": '{"score":', "logprob": 0.0}, _token("4", ("4", 0.6), ("5", 0.3), ("9", 0.1)),
              {"token": ', "reason": "x"}', "logprob": 0.0}]
    assert weighted_score(tokens, 1, 5) == pytest.approx((4 * 0.6 + 5 * 0.3) / 0.9)
    assert weighted_score(None, 1, 5) is None and weighted_score([{"token": "{}", "logprob": 0.0}], 1, 5) is None
