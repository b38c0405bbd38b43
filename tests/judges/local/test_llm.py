"""``judges/local/llm.py``: the questions the local judge asks by its next token, and (with the
bundled model, slow) the batched verification and grammar-constrained generation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragmeter.judges.local.llm import QUESTION_SETS, THREE_WAY_SHORT, YES_NO_SHORT, PromptTooLong, TypedQuestion
from ragmeter.judges.transport import JudgeTransportError


def test_a_question_puts_the_passage_before_the_claim():
    """The (system, passage) prefix comes first, so its cache serves every claim checked against it."""
    messages = THREE_WAY_SHORT.messages("The R2 has a 24-month warranty.", "The R2 is blue.")
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert user == "CONTEXT:\nThe R2 has a 24-month warranty.\n\nCLAIM: The R2 is blue."
    assert user.index("The R2 has") < user.index("The R2 is blue")


def test_every_question_set_asks_typed_questions_with_distinct_answers():
    for name, questions in QUESTION_SETS.items():
        assert questions and all(isinstance(q, TypedQuestion) for q in questions), name
        for q in questions:
            spellings = [w for words in q.words.values() for w in words]
            assert len(spellings) == len(set(spellings)), q.name  # a spelling counts for one answer only
            assert "{context}" in q.template and "{claim}" in q.template, q.name
    assert set(YES_NO_SHORT.words) == {"yes", "no"}
    assert set(THREE_WAY_SHORT.words) == {"supported", "contradicted", "unmentioned"}


def test_a_prompt_too_long_fails_its_item_as_a_transport_error():
    assert issubclass(PromptTooLong, JudgeTransportError)


@pytest.mark.slow
def test_claims_as_sequences_of_one_batch_give_the_logits_of_one_at_a_time(llm):
    """The batched path (a shared passage prefix, each claim its own sequence) against each full
    prompt evaluated alone: the same next-token distributions (float rounding of another batch
    shape aside), and the answer of each claim is its own (no leak between sequences)."""
    from ragmeter.judges.local.llm import Usage

    passage = "The R2 router carries a 24-month limited hardware warranty. Shipping of replacements takes 5 days."
    claims = ["The R2 has a 24-month warranty.", "Replacements ship within 2 days.", "The R2 is blue.",
              "The R2 has a 24-month warranty."]
    prompts = [llm._prompt_tokens(THREE_WAY_SHORT.messages(passage, c)) for c in claims]
    batched = llm.next_token_dists(prompts, Usage())
    alone = [llm.next_token_dists_one(p, Usage())[0] for p in prompts]
    for b, a in zip(batched, alone):
        assert int(np.argmax(b)) == int(np.argmax(a))
        assert np.abs(b - a).max() < 0.02
    assert np.abs(batched[0] - batched[3]).max() < 1e-6  # the same claim twice: the same answer
    probs = llm.ask(THREE_WAY_SHORT, passage, claims[:3])
    assert probs[0]["supported"] > probs[0]["contradicted"] and probs[1]["contradicted"] > probs[1]["supported"]


@pytest.mark.slow
def test_grammar_constrained_generation_parses_and_reports_tokens_so_far(llm):
    ticks: list[int] = []
    llm.on_tokens = ticks.append
    schema = {"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
              "required": ["claims"], "additionalProperties": False}
    try:
        text, cut = llm.generate_json([{"role": "system", "content": "Split the text into claims."},
                                       {"role": "user", "content": "TEXT: The shop opens at 9. It closes at 5."}],
                                      schema, max_tokens=80, seed=0)
    finally:
        llm.on_tokens = None
    assert not cut and isinstance(json.loads(text)["claims"], list)
    assert ticks == list(range(1, len(ticks) + 1)) and len(ticks) >= 5
    text, cut = llm.generate_json([{"role": "user", "content": "TEXT: The shop opens at 9."}], schema, max_tokens=3,
                                  seed=0)
    assert cut  # cut off at max_tokens, reported as such
