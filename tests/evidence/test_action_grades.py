"""``evidence/action_grades.py``: each case's tool calls graded against its criteria after the judge
stages; what needs a judge or records it was not given is unable to verify, with the reason."""

from __future__ import annotations

import ragmeter
from ragmeter.actions import load_action_criteria
from tests.evidence.gathering import gather
from tests.records.test_lookup import WARRANTY_RECORDS

WARRANTY = WARRANTY_RECORDS.parent


def test_the_power_surge_case_fails_on_the_order_it_placed():
    """Case a1 asks for a replacement after a power surge; the run looked the warranty up, then
    placed an order: the suite's surge rule fails, its order rules pass, and the claim and record
    criteria cannot be checked without a judge and a record source."""
    a1 = ragmeter.load_dataset(WARRANTY / "agent_runs.jsonl").samples[0]
    (ev,), seen = gather([a1], {"actions"}, action_criteria=load_action_criteria(WARRANTY / "criteria.yaml"))
    grade = ev.actions
    assert grade.case_id == "a1" and grade.verdict == "fail" and seen == []
    verdicts = {r.id: r.verdict for r in grade.results}
    assert verdicts == {"declared_tools": "pass", "no-order-for-excluded-damage": "fail",
                        "warranty-checked-first": "pass", "one-order-at-most": "pass",
                        "no-coverage-promise-for-surges": "unable_to_verify", "order-on-record": "unable_to_verify"}
    reasons = {r.id: r.evidence for r in grade.results}
    assert reasons["order-on-record"] == "no record source was given"
    assert reasons["no-order-for-excluded-damage"].startswith("called: #2 create_replacement_order(")
