"""The provider of a kind of evidence, and where each kind's provider lives.

ir_measures keeps measures (what is computed) apart from the providers that compute them.
Here a judged metric declares the evidence it needs (``JudgedSpec.needs``: need names from
:mod:`ragmeter.evidence.matrix`) and one provider per kind of evidence fills it: it names
its prompts, builds the judge requests a sample needs in each of the two stages, and reads
each reply into the sample's :class:`~ragmeter.evidence.matrix.Evidence`. The planner
(:mod:`ragmeter.evidence.planner`) runs the stages over the providers a run needs and names
no kind of evidence.

- ``EXTRACTION``: what depends on the sample alone (claims, needed sentences, questions, ...);
- ``VERIFICATION``: what depends on stage one's claims (their verdicts, the facts they state).

:data:`PROVIDERS` registers each kind's provider module, imported only when a run needs that
kind (a run without records or actions loads neither). Adding a kind of evidence is one
provider module (with its prompt and schema) and one line there.

>>> prompts_for(frozenset({"answer@context", "rubric:tone"}))
('claims.extract', 'claims.verify', 'rubric.score')
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

from ragmeter.evidence.matrix import (
    ACTIONS,
    ANSWER_CLAIMS,
    CITED,
    FACTS,
    GROUNDEDNESS,
    PAIRS,
    QUESTIONS,
    REFERENCE_CLAIMS,
    RUBRIC,
    RUBRIC_JOINT,
    SENTENCES,
    STANDALONE,
    Evidence,
    Unavailable,
    need_kind,
)

if TYPE_CHECKING:
    from ragmeter.core.sample import Sample
    from ragmeter.evidence.sources import Sources
    from ragmeter.judges.judge import Judge, JudgeRequest, Judgment

EXTRACTION, VERIFICATION = "extraction", "verification"
#: The stages in order, each with what the progress line says while its calls run.
STAGES = ((EXTRACTION, "extracting claims"), (VERIFICATION, "verifying claims"))

#: Need kind -> the module of ``ragmeter.evidence`` whose ``PROVIDER`` fills it, in the order
#: the providers' requests are sent.
PROVIDERS: dict[str, str] = {
    FACTS: "fact_checks",
    **dict.fromkeys((ANSWER_CLAIMS, REFERENCE_CLAIMS, *PAIRS), "claims"),
    CITED: "cited_passages",
    SENTENCES: "context_sentences",
    QUESTIONS: "answer_questions",
    STANDALONE: "standalone_turns",
    GROUNDEDNESS: "groundedness_ratings",
    RUBRIC: "rubric_scores",
    RUBRIC_JOINT: "rubric_scores",
    ACTIONS: "action_grades",
}

#: Whether another provider needs a need for the sample at hand (a fact check reads the claims).
Wanted = Callable[[str], bool]


class Provider(Protocol):
    """What the planner asks of a kind of evidence (:class:`ProviderBase` gives the optional
    parts a default)."""

    #: need kind -> the ids of the prompts whose judgments fill it (the kinds it fills)
    prompts: ClassVar[Mapping[str, tuple[str, ...]]]
    #: need kinds of other providers this one may read, so the planner loads them too
    reads: ClassVar[frozenset[str]]

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        """For the run's needs (all of them: it picks its own kinds) and sources."""

    def check(self, samples: Sequence[Sample]) -> None:
        """Before any call (a dry run too): raise on data the judge could not be shown."""

    def prepare(self, sample: Sample, ev: Evidence) -> None:
        """Before any call of a run: what the data already gives, and why a sample lacks the rest."""

    def requires(self, sample: Sample) -> frozenset[str]:
        """What this provider needs of the others for ``sample`` (see :attr:`reads`)."""

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        """The judge requests ``sample`` needs in ``stage``, by a name :meth:`read` is given back.
        What is missing without a call is written into ``ev`` (``Unavailable`` with the reason)."""

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        """The judgment (or the error) for request ``name``, into ``ev``."""

    def stand_in(self, sample: Sample, ev: Evidence) -> None:
        """For a dry run's estimate of the verification stage: what extraction would have given."""

    def finishes(self) -> bool:
        """Whether :meth:`finish` has work (the planner then opens the sources around it)."""

    async def finish(self, samples: Sequence[Sample], evidence: Sequence[Evidence], judge: Judge | None) -> None:
        """After both stages: what is not a judge request (record lookups, gradings)."""


class ProviderBase:
    """A provider's state (the run's needs and sources) and the defaults of its optional parts."""

    prompts: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    reads: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        self.needs = needs
        self.kinds = {need_kind(n) for n in needs}
        self.sources = sources

    def check(self, samples: Sequence[Sample]) -> None:
        return None

    def prepare(self, sample: Sample, ev: Evidence) -> None:
        return None

    def requires(self, sample: Sample) -> frozenset[str]:
        return frozenset()

    def stand_in(self, sample: Sample, ev: Evidence) -> None:
        return None

    def finishes(self) -> bool:
        return False

    async def finish(self, samples: Sequence[Sample], evidence: Sequence[Evidence], judge: Judge | None) -> None:
        return None


def provider_type(kind: str) -> type[Provider]:
    """The provider class of a need kind (its module imported now)."""
    return cast("type[Provider]", importlib.import_module(f"ragmeter.evidence.{PROVIDERS[kind]}").PROVIDER)


def prompts_for(needs: frozenset[str]) -> tuple[str, ...]:
    """The prompt ids whose judgments the needs read, sorted."""
    return tuple(sorted({p for need in needs for p in provider_type(need_kind(need)).prompts[need_kind(need)]}))


def failed(error: Exception) -> Unavailable:
    """The evidence a failed judgment leaves: ``Failed``, with the error named by its type."""
    return Unavailable(f"{type(error).__name__}: {error}", failed=True)


def unavailable(j: Judgment | Exception) -> Unavailable | None:
    """Why a judgment gives no evidence (a transport error, or a reply that never validated), or None."""
    if isinstance(j, Exception):
        return failed(j)
    if not j.ok:
        return Unavailable(j.error or "JudgeOutputError", failed=True)
    return None


def value(j: Judgment | Exception) -> Any:
    """A judgment's validated value (read only where :func:`unavailable` found none)."""
    return cast("Judgment", j).value


def has_text(text: str | None) -> bool:
    return text is not None and bool(text.strip())


def context_passages(sample: Sample, *, answer: bool = False) -> list[tuple[str, str | None]]:
    """(chunk id, text) for each chunk that reached the prompt, in prompt order; with ``answer``,
    each chunk the answer was written from (``Sample.answer_context``, where a request retrieved
    several times; else the same)."""
    if answer and sample.answer_context is not None:
        return [(c.id, c.text) for c in sample.answer_context]
    texts = {c.id: c.text for c in sample.retrieved}
    return [(cid, texts.get(cid)) for cid in sample.context_ids]


def check_context_texts(samples: Sequence[Sample]) -> None:
    """Before any call: every context chunk a judge must read has a text."""
    from ragmeter.core.errors import InvalidInputError

    for s in samples:
        for cid, text in context_passages(s) + (context_passages(s, answer=True) if s.answer_context else []):
            if text is None:
                raise InvalidInputError(f'context chunk "{cid}" has no text for the judge to read', record=s.id,
                                        field="retrieved", fix="give chunk texts in the data or with --corpus")
