"""The provider of ``actions``: the run's tool calls graded against its criteria (Agent Assurance's
check in the article "RAG Evaluation Metrics: Formulas and a Worked Example").

The sample's ``tool_calls``, ``tools`` and ``criteria`` (kept in its metadata by the dataset
reader) with the suite's criteria (``Sources.action_criteria``) are graded by
:func:`ragmeter.actions.grade.grade_case` after the judge, with the record lookup opened for
post-conditions. ``never_claim`` and ``when.claims_state`` ask the judge through the claim
matrix's ``claims.verify`` prompt (:func:`ragmeter.actions.verifier`), so the answer is split
into claims where, and only where, a criterion reads them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ragmeter.actions.calls import AgentRun
from ragmeter.actions.criteria import ActionCriterion, CriteriaSet
from ragmeter.actions.grade import CaseGrade, VerifyFn, grade_case
from ragmeter.actions.judged import verifier
from ragmeter.actions.readers import run_from_sample
from ragmeter.core import patterns
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import ACTIONS, ANSWER_CLAIMS, Claim, Evidence
from ragmeter.evidence.provider import ProviderBase, Wanted
from ragmeter.evidence.sources import Sources
from ragmeter.judges.judge import Judge, JudgeRequest, Judgment


def _found(pattern: str, text: str) -> bool:
    """A user pattern searched with a time limit; one past it may apply (its grade says why not)."""
    try:
        return patterns.search(pattern, text, ignore_case=True)
    except patterns.PatternTimeout:
        return True


def _needs_claims(criteria: Sequence[ActionCriterion], run: AgentRun) -> bool:
    """Some criterion reads the answer's claims, and its question/answer condition (read
    without claims) does not already rule it out: only then is the answer split."""
    for c in criteria:
        when = c.when
        if c.kind != "never_claim" and (when is None or (when.claims_match is None and when.claims_state is None)):
            continue
        if when is not None and any(
                pattern is not None and text is not None and not _found(pattern, text)
                for pattern, text in ((when.question_matches, run.question), (when.answer_matches, run.answer))):
            continue
        return True
    return False


class ActionGrades(ProviderBase):
    """Each case's grade: a verdict per criterion that applies, with its evidence."""

    prompts = {ACTIONS: ("claims.extract", "claims.verify")}
    reads = frozenset({ANSWER_CLAIMS})

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.records = sources.records
        self.criteria = sources.action_criteria or CriteriaSet()

    def requires(self, sample: Sample) -> frozenset[str]:
        """The answer's claims, where a criterion of the case reads them."""
        run = run_from_sample(sample)
        return frozenset({ANSWER_CLAIMS}) if _needs_claims(self.criteria.for_case(run.id, run.criteria), run) \
            else frozenset()

    def prepare(self, sample: Sample, ev: Evidence) -> None:
        run_from_sample(sample)  # bad tool calls or criteria stop the run before any call

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        return {}  # graded after the judge stages

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        raise AssertionError("action grades make no request of their own")

    def finishes(self) -> bool:
        return True

    async def finish(self, samples: Sequence[Sample], evidence: Sequence[Evidence], judge: Judge | None) -> None:
        verify = verifier(judge) if judge is not None else None
        grades = await asyncio.gather(*(self._grade(s, ev, verify) for s, ev in zip(samples, evidence)))
        for ev, grade in zip(evidence, grades):
            ev.actions = grade

    async def _grade(self, s: Sample, ev: Evidence, verify: VerifyFn | None) -> CaseGrade:
        run = run_from_sample(s)
        claims: tuple[Claim, ...] | None = ev.answer_claims if isinstance(ev.answer_claims, tuple) else None
        return await grade_case(run, self.criteria.for_case(run.id, run.criteria), claims=claims,
                                records=self.records, verify=verify)


PROVIDER = ActionGrades
