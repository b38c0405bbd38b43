"""The provider of ``groundedness_ratings``: two judges' ratings of how well the context grounds
the whole answer (Ragas's Response Groundedness, from NVIDIA's dual-judge metrics).

Two calls per answered sample, in the extraction stage: ``groundedness.judge1`` and
``groundedness.judge2``, each with the context (the passages the answer was written from,
joined by newlines, as Ragas joins its retrieved contexts) and the answer as the assertion, each
returning a rating of 0 (not supported), 1 (partly) or 2 (fully). A sample without an answer
or with an empty context is ``Unavailable`` with the reason, without a call.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import GROUNDEDNESS, Evidence, Unavailable
from ragmeter.evidence.provider import (
    EXTRACTION,
    ProviderBase,
    Wanted,
    check_context_texts,
    context_passages,
    has_text,
    unavailable,
    value,
)
from ragmeter.evidence.sources import Sources
from ragmeter.judges import schemas
from ragmeter.judges.judge import JudgeRequest, Judgment
from ragmeter.judges.prompts import load_prompt

#: The two rating prompts, in the order Ragas asks them.
JUDGES = ("groundedness.judge1", "groundedness.judge2")


class GroundednessRatings(ProviderBase):
    """Each answer's two groundedness ratings."""

    prompts = {GROUNDEDNESS: JUDGES}

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.judges = {pid: load_prompt(pid) for pid in JUDGES}

    def check(self, samples: Sequence[Sample]) -> None:
        check_context_texts(samples)  # the answer's own context too, where it has one

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        if stage != EXTRACTION:
            return {}
        context = "\n".join(text or "" for _, text in context_passages(sample, answer=True))
        why = ("the sample has no answer" if not has_text(sample.answer) else
               "the context is empty" if not context.strip() else None)
        if why is not None:
            ev.groundedness = dict.fromkeys(JUDGES, Unavailable(why))
            return {}
        return {pid: JudgeRequest(prompt, {"context": context, "response": sample.answer}, schemas.RATING, "rating")
                for pid, prompt in self.judges.items()}

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        ev.groundedness[name] = unavailable(judgment) or value(judgment)["rating"]


PROVIDER = GroundednessRatings
