"""``records/stale.py``: a stale chunk is found only where the context supports a fact the record contradicts."""

from __future__ import annotations

from ragmeter.evidence.matrix import Claim, Evidence, Unavailable, Verdict
from ragmeter.records import CannotVerify, Fact, RecordValue, find_stale_chunks, judge_fact


def test_stale_chunk_only_where_the_context_supports_the_fact():
    fail = judge_fact(Fact("R2", "replacement_price", "$89", claim_id=1), RecordValue(99, "USD"), "s")
    passed = judge_fact(Fact("R1", "replacement_price", "$59", claim_id=2), RecordValue(59, "USD"), "s")
    unverified = judge_fact(Fact("R3", "replacement_price", "$9", claim_id=3), CannotVerify("none", "no_record"), "s")
    claims = (Claim(1, "R2 costs $89."), Claim(2, "R1 costs $59."), Claim(3, "R3 costs $9."))

    def matrix(v1: str):
        return Evidence(answer_claims=claims, verdicts={"answer@context": (
            Verdict(1, v1, ("price-list-2025",) if v1 != "not_found" else (), False, ""),
            Verdict(2, "supported", ("price-list-2025",), False, ""), Verdict(3, "supported", ("x",), False, ""))})

    assert len(find_stale_chunks(matrix("supported"), [fail, passed, unverified])[0]) == 1
    for v in ("contradicted", "not_found"):  # the model changed or invented it: a generation fault
        assert find_stale_chunks(matrix(v), [fail, passed, unverified]) == ([], None)
    assert find_stale_chunks(matrix("supported"), []) == ([], "no fact was checked against the records")
    failed = Evidence(answer_claims=claims, verdicts={"answer@context": Unavailable("judge timed out", failed=True)})
    assert find_stale_chunks(failed, [fail]) == ([], "no answer-vs-context verdicts: judge timed out")
    assert find_stale_chunks(Evidence(answer_claims=claims), [fail])[1].startswith("no answer-vs-context verdicts")
