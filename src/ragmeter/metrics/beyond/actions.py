"""Action pass rate: did the run's tool calls meet the criteria set for them?

Per case (sample), every criterion that applies gets Pass, Fail or Unable to verify with its
evidence (:mod:`ragmeter.actions.grade`): must call / must never call (optionally when a
condition holds), argument constraints, order, maximum calls, a post-condition confirmed in
the record source, statements the answer must never make; a call to a tool the agent does not
declare fails. The case fails if any criterion fails, passes if every verified one passes.

- ``action_pass_rate`` = 1 for a passing case, 0 for a failing one; a case that is unable to
  verify (no calls recorded, no record source, no claims or judge for a never-claim check)
  or where no criterion applies is NotComputed with the reason, so the mean is the article's
  *pass rate over the cases that reached a verdict* and its coverage the verification coverage.
- ``action_pass_rate(criterion='ID')``: the same for one criterion id.
- :func:`verification_coverage`: cases that reached a verdict / cases where a criterion applies
  (the unverified ones included), read from the metric's coverage counts.

The reference system of the article "RAG Evaluation Metrics: Formulas and a Worked Example" is
Agent Assurance (a verdict per criterion, a pass rate over
verified cases, verification coverage).

>>> from ragmeter.actions.grade import CaseGrade, CriterionResult
>>> from ragmeter.actions.criteria import ActionCriterion
>>> from ragmeter.metrics import JudgedContext, make_measure
>>> c = ActionCriterion(id="no-order", kind="must_not_call", tool="create_order")
>>> ev = Evidence(actions=CaseGrade("a1", (CriterionResult(c, "fail", "called: create_order"),)))
>>> action_pass_rate(ev, Sample("a1"), make_measure("action_pass_rate"), JudgedContext())
0.0
"""

from __future__ import annotations

from collections.abc import Mapping

from ragmeter.core.measure import Display, Measure, Param
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import ACTIONS, Evidence
from ragmeter.metrics.claim_reading import require
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec, Unscorable
from ragmeter.metrics.spec_table import register

NEEDS = frozenset({ACTIONS})
NO_CRITERION = "no criterion applies to this case"


def action_pass_rate(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    # the verdict names load with the grades they read, not wherever metrics are listed
    from ragmeter.records.verdicts import FAIL, NOT_APPLICABLE, PASS, UNABLE_TO_VERIFY

    grade = require(ev.actions, "the tool calls were not graded")
    wanted = measure.params["criterion"]
    results = [r for r in grade.results if not wanted or r.id == wanted]
    if wanted and not results:
        raise Unscorable(f"no criterion {wanted!r} for this case")
    verdicts = {r.verdict for r in results}
    verdict = next((v for v in (FAIL, UNABLE_TO_VERIFY, PASS) if v in verdicts), NOT_APPLICABLE)
    if verdict == PASS:
        return 1.0
    if verdict == FAIL:
        return 0.0
    if verdict == UNABLE_TO_VERIFY:
        by_reason: dict[str, list[str]] = {}
        for r in results:
            if r.verdict == UNABLE_TO_VERIFY:
                by_reason.setdefault(r.evidence, []).append(r.id)
        reasons = "; ".join(f"{why} ({', '.join(ids)})" for why, ids in by_reason.items())
        raise Unscorable("unable to verify: " + reasons)
    raise Unscorable(NO_CRITERION)


def verification_coverage(scored: int, reasons: Mapping[str, int]) -> tuple[int, int]:
    """(cases that reached a verdict, cases where some criterion applies), from a summary's scored
    count and its reasons (not computed and failed, with their counts): every case not scored
    counts as applicable, unless no criterion applied to it.

    >>> verification_coverage(2, {NO_CRITERION: 1, "unable to verify: no tool calls were recorded": 1})
    (2, 3)
    """
    return scored, scored + sum(n for why, n in reasons.items() if not why.startswith("no criterion "))


register(JudgedSpec(
    name="action_pass_rate", version=1, family="actions", evidence=NEEDS, binary=True,
    display=Display("actions", "action pass rate"),
    definition="cases whose tool calls meet every criterion / cases that reached a verdict",
    source="TestMu AI's Agent Assurance check, as the article 'RAG Evaluation Metrics: Formulas and a Worked Example' "
           "(TestMu AI) describes it; ragmeter.actions",
    params={"criterion": Param(str, "", doc="one criterion id (default: every criterion of the case)")},
    undefined="no criterion applies, or the case is unable to verify (no calls recorded, no record source, "
              "no claims)",
    compute=action_pass_rate))
