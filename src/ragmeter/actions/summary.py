"""Per run: a verdict per criterion, the pass rate over the cases that reached a verdict, and
verification coverage (Agent Assurance's report in the article "RAG Evaluation Metrics: Formulas
and a Worked Example").

- per criterion id: Pass / Fail / Unable to verify / Not applicable counts, its pass rate
  ``Pass / (Pass + Fail)`` and coverage ``(Pass + Fail) / (cases where it applies)``;
- per case (fail if any criterion fails, unable if any is unverified, else pass): the
  run's **pass rate** = passing cases / cases with a verdict, and its **coverage** = cases
  with a verdict / cases where some criterion applies.

A case with no calls recorded is unable to verify: it changes the coverage and leaves the
pass rate as it was.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.actions.calls import AgentRun
from ragmeter.actions.criteria import CriteriaSet
from ragmeter.actions.grade import CaseGrade, VerifyFn, grade_case
from ragmeter.core.aio import run_sync
from ragmeter.records.lookup import RecordLookup
from ragmeter.records.verdicts import VerdictCounts, count


@dataclass(frozen=True)
class ActionsSummary:
    by_criterion: Mapping[str, VerdictCounts]
    descriptions: Mapping[str, str]
    criteria: VerdictCounts  # every criterion verdict of every case, pooled
    cases: VerdictCounts  # one verdict per case

    @property
    def pass_rate(self) -> float | None:
        """Passing cases / cases that reached a verdict (None when none did)."""
        return self.cases.rate

    @property
    def coverage(self) -> float | None:
        """Cases that reached a verdict / cases where a criterion applies."""
        return self.cases.coverage

    def as_dict(self) -> dict[str, Any]:
        return {"pass_rate": self.pass_rate, "coverage": self.coverage, "cases": self.cases.as_dict(),
                "criteria": self.criteria.as_dict(),
                "by_criterion": {k: {"criterion": self.descriptions[k], **v.as_dict()}
                                 for k, v in self.by_criterion.items()}}


def summarise(grades: Sequence[CaseGrade]) -> ActionsSummary:
    by: dict[str, list[str]] = {}
    descriptions: dict[str, str] = {}
    for g in grades:
        for r in g.results:
            by.setdefault(r.id, []).append(r.verdict)
            descriptions.setdefault(r.id, r.criterion.describe())
    per = {k: count(v) for k, v in by.items()}
    pooled = sum(per.values(), VerdictCounts())
    return ActionsSummary(per, descriptions, pooled, count(g.verdict for g in grades))


def grade_cases(runs: Sequence[AgentRun], criteria: CriteriaSet | None = None, *,
                claims: Mapping[str, Sequence[Any] | None] | None = None, records: RecordLookup | None = None,
                verify: VerifyFn | None = None) -> list[CaseGrade]:
    """The sync wrapper: grade every case in one event loop, then close the record source.

    ``claims`` maps a case id to its answer claims (missing or None: not available)."""
    crit = criteria or CriteriaSet()

    async def main() -> list[CaseGrade]:
        try:
            if records is not None:
                await records.prepare()
            return list(await asyncio.gather(*(
                grade_case(r, crit.for_case(r.id, r.criteria), claims=(claims or {}).get(r.id),
                           records=records, verify=verify) for r in runs)))
        finally:
            if records is not None:
                await records.aclose()

    return run_sync(main)
