"""The provider of every kind of evidence not yet in its own module (while they move out).

Standalone turns add one call per later turn when asked for; the tool calls are graded after
the judge.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from ragmeter.actions.calls import AgentRun
from ragmeter.actions.criteria import CriteriaSet, Criterion
from ragmeter.actions.grade import CaseGrade, VerifyFn, grade_case
from ragmeter.actions.judged import verifier
from ragmeter.actions.readers import run_from_sample
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import (
    ACTIONS,
    ANSWER_CLAIMS,
    STANDALONE,
    Claim,
    Evidence,
    Unavailable,
)
from ragmeter.evidence.provider import (
    EXTRACTION,
    ProviderBase,
    Wanted,
    unavailable,
    value,
)
from ragmeter.evidence.sources import Sources
from ragmeter.judges import schemas
from ragmeter.judges.judge import Judge, JudgeRequest, Judgment
from ragmeter.judges.prompts import load_prompt


class Legacy(ProviderBase):
    """Standalone turns (one ``turn.standalone`` call per later turn) and the tool calls' grades."""

    prompts = {
        STANDALONE: ("turn.standalone",),
        ACTIONS: ("claims.extract", "claims.verify"),
    }

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.beyond = _Actions(set(needs), sources)
        self.standalone = load_prompt("turn.standalone")

    reads = frozenset({ANSWER_CLAIMS})

    def requires(self, sample: Sample) -> frozenset[str]:
        return frozenset({ANSWER_CLAIMS}) if self.beyond.wants_answer_claims(sample) else frozenset()

    def prepare(self, sample: Sample, ev: Evidence) -> None:
        self.beyond.prepare(sample, ev)

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        return self.extraction_requests(sample, ev) if stage == EXTRACTION else {}

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        self.read_extraction(ev, name, judgment)

    def finishes(self) -> bool:
        return self.beyond.finishes()

    async def finish(self, samples: Sequence[Sample], evidence: Sequence[Evidence], judge: Judge | None) -> None:
        await self.beyond.finish(samples, evidence, judge)

    def extraction_requests(self, s: Sample, ev: Evidence) -> dict[str, JudgeRequest]:
        out: dict[str, JudgeRequest] = {}
        if STANDALONE in self.kinds:
            standalone = self._standalone_request(s, ev)
            if standalone is not None:
                out["standalone"] = standalone
        return out

    def _standalone_request(self, s: Sample, ev: Evidence) -> JudgeRequest | None:
        turn = s.metadata.get("turn")
        if "standalone" in s.metadata:
            ev.standalone = bool(s.metadata["standalone"])  # the data says so: no call
        elif turn is None:
            ev.standalone = Unavailable("not a conversation turn")
        elif turn == 1:
            ev.standalone = True  # nothing came before it
        else:
            return JudgeRequest(self.standalone, {"history": s.metadata.get("history", ""),
                                                  "question": s.question or ""},
                                schemas.STANDALONE, "standalone")
        return None

    def read_extraction(self, ev: Evidence, name: str, j: Judgment | Exception) -> None:
        """Stage 1's judgment ``name`` (a key of :meth:`extraction_requests`) into ``ev``."""
        bad = unavailable(j)
        if name == "standalone":
            ev.standalone = bad or value(j)["standalone"]


def _needs_claims(criteria: Sequence[Criterion], run: AgentRun) -> bool:
    """Some criterion reads the answer's claims, and its question/answer condition (read
    without claims) does not already rule it out: only then is the answer split."""
    for c in criteria:
        when = c.when
        if c.kind != "never_claim" and (when is None or (when.claims_match is None and when.claims_state is None)):
            continue
        if when is not None and any(
                pattern is not None and text is not None and not re.search(pattern, text, re.IGNORECASE)
                for pattern, text in ((when.question_matches, run.question), (when.answer_matches, run.answer))):
            continue
        return True
    return False


class _Actions:
    """Plans and gathers the ``actions`` evidence of each sample."""

    def __init__(self, needs: set[str], sources: Sources) -> None:
        self.actions = ACTIONS in needs
        self.records = sources.records
        self.criteria = sources.action_criteria or CriteriaSet()

    def wants_answer_claims(self, s: Sample) -> bool:
        """Whether this sample's answer must be split into claims for these needs."""
        if self.actions:
            run = run_from_sample(s)
            return _needs_claims(self.criteria.for_case(run.id, run.criteria), run)
        return False

    def prepare(self, s: Sample, ev: Evidence) -> None:
        if self.actions:
            run_from_sample(s)  # bad tool calls or criteria stop the run before any call

    def finishes(self) -> bool:
        return self.actions

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


PROVIDER = Legacy
