"""The provider of ``context_sentences``: which of the context's sentences the question needs.

The context is cut into numbered sentences (:func:`ragmeter.judges.sentences.split_sentences`,
no model) and one ``context.relevance`` call per sample, in the extraction stage, names the
sentences needed to answer the question. An empty context or a sample without a question is
``Unavailable`` with the reason, without a call.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import SENTENCES, Evidence, Unavailable
from ragmeter.evidence.provider import (
    EXTRACTION,
    ProviderBase,
    Wanted,
    check_context_texts,
    context_passages,
    unavailable,
    value,
)
from ragmeter.evidence.sources import Sources
from ragmeter.judges import schemas
from ragmeter.judges.judge import JudgeRequest, Judgment
from ragmeter.judges.prompts import load_prompt
from ragmeter.judges.sentences import split_sentences


class ContextSentences(ProviderBase):
    """The context's sentences, and the ones the question needs."""

    prompts = {SENTENCES: ("context.relevance",)}

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.relevance = load_prompt("context.relevance")

    def check(self, samples: Sequence[Sample]) -> None:
        check_context_texts(samples)

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        if stage != EXTRACTION:
            return {}
        ev.sentences = tuple(sent for _, text in context_passages(sample) for sent in split_sentences(text or ""))
        if not ev.sentences:
            ev.needed_sentences = Unavailable("the context is empty")
        elif not sample.question:
            ev.needed_sentences = Unavailable("the sample has no question")
        else:
            listing = "\n".join(f"{i}. {t}" for i, t in enumerate(ev.sentences, start=1))
            return {"sentences": JudgeRequest(self.relevance, {"question": sample.question, "sentences": listing},
                                              schemas.NEEDED_SENTENCES, "needed_sentences")}
        return {}

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        ev.needed_sentences = unavailable(judgment) or tuple(
            sorted({i for i in value(judgment)["needed"] if 1 <= i <= len(ev.sentences)}))


PROVIDER = ContextSentences
