"""The provider of ``answer_questions``: questions generated from the answer (answer relevancy).

One ``answer.questions`` call per answered sample, in the extraction stage, asks for the
questions the answer would answer (``answer_questions:<n>``: at most ``n``, the largest any
measure asks; 3 by default) and whether the answer is noncommittal. A sample without an
answer is ``Unavailable`` with the reason, without a call.
"""

from __future__ import annotations

from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import QUESTIONS, Evidence, Unavailable, need_argument, need_kind
from ragmeter.evidence.provider import EXTRACTION, ProviderBase, Wanted, has_text, unavailable, value
from ragmeter.evidence.sources import Sources
from ragmeter.judges import schemas
from ragmeter.judges.judge import JudgeRequest, Judgment
from ragmeter.judges.prompts import load_prompt

DEFAULT_QUESTIONS = 3


class AnswerQuestions(ProviderBase):
    """Questions generated from the answer, and whether it commits to anything."""

    prompts = {QUESTIONS: ("answer.questions",)}

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.n_questions = max((int(need_argument(n)) for n in self.needs if need_kind(n) == QUESTIONS
                                and need_argument(n)), default=DEFAULT_QUESTIONS)
        self.generate = load_prompt("answer.questions")

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        if stage != EXTRACTION:
            return {}
        if not has_text(sample.answer):
            ev.questions = Unavailable("the sample has no answer")
            return {}
        return {"questions": JudgeRequest(self.generate, {"answer": sample.answer, "n": self.n_questions},
                                          schemas.QUESTIONS, "questions")}

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        bad = unavailable(judgment)
        if bad:
            ev.questions = bad
        else:
            ev.questions = tuple(q for q in value(judgment)["questions"] if q.strip())[: self.n_questions]
            ev.noncommittal = value(judgment)["noncommittal"]


PROVIDER = AnswerQuestions
