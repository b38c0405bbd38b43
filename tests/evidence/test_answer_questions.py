"""``evidence/answer_questions.py``: questions generated from the answer, as many as the need asks."""

from __future__ import annotations

from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import Unavailable
from tests.evidence.gathering import gather


def test_the_questions_are_cut_to_the_number_asked_and_blank_ones_dropped():
    def respond(prompt_id, inputs, messages):
        assert prompt_id == "answer.questions"
        return {"questions": ["How long?", " ", "Which model?", "Is shipping free?"], "noncommittal": False}

    samples = [Sample(id="a", question="q", answer="24 months."), Sample(id="b", question="q")]
    (answered, empty), seen = gather(samples, {"answer_questions:2"}, respond)
    assert answered.questions == ("How long?", "Which model?") and answered.noncommittal is False
    assert seen == [("answer.questions", {"answer": "24 months.", "n": 2})]
    assert empty.questions == Unavailable("the sample has no answer")  # no call for it
