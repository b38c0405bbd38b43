"""Facts against the system of record: normalisation known answers, verdicts, record accuracy
and coverage, the fact-extraction prompt through the scripted and the HTTP test judge, and the
stale-chunk finder on the warranty sample's stale-fact case."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ragmeter.evidence.matrix import Claim, Evidence, Verdict
from ragmeter.judges import (
    Judge,
    JudgeRequest,
    OpenAIBackend,
    ScriptedBackend,
    load_prompt,
)
from ragmeter.records import (
    FACTS_SCHEMA,
    CannotVerify,
    Fact,
    RecordLookup,
    RecordValue,
    TableSource,
    check_facts_sync,
    fact_inputs,
    find_stale_chunks,
    judge_fact,
    parse_facts,
    record_accuracy,
    verification_coverage,
)
from ragmeter.records.facts import undefined_reason
from ragmeter.records.verdicts import count
from tests import judge_server

ROOT = Path(__file__).resolve().parents[2]
WARRANTY = ROOT / "examples" / "warranty"
















def test_fact_verdicts_never_pass_without_a_comparison():
    fact = Fact("ORD-1", "status", "shipped", claim_id=2)
    for outcome in (CannotVerify("x timed out", "timeout"), CannotVerify("boom", "error"),
                    CannotVerify("no such order", "no_record"), CannotVerify("not allowed", "refused")):
        check = judge_fact(fact, outcome, "src")
        assert check.verdict == "cannot_verify" and check.record is None and check.reason == outcome.reason
    undecidable = judge_fact(Fact("ORD-1", "ship_date", "05/10/2026"), RecordValue("2026-10-05"), "src")
    assert undecidable.verdict == "cannot_verify" and undecidable.record == RecordValue("2026-10-05")
    fail = judge_fact(Fact("R2", "replacement_price", "$89"), RecordValue(99, "USD"), "src")
    assert fail.verdict == "fail" and fail.record == RecordValue(99, "USD")
    assert fail.reason == "stated $89; the record holds 99 USD"
    assert json.loads(json.dumps(fail.as_dict()))["record"] == {"value": 99, "unit": "USD"}


def test_record_accuracy_arithmetic():
    def checks(*verdicts):
        return [judge_fact(Fact("e", "a", "x"), RecordValue("x") if v == "pass" else RecordValue("y")
                           if v == "fail" else CannotVerify("down"), "s") for v in verdicts]

    c = checks("pass", "pass", "fail", "cannot_verify", "cannot_verify")
    assert [x.verdict for x in c] == ["pass", "pass", "fail", "cannot_verify", "cannot_verify"]
    assert record_accuracy(c) == 2 / (2 + 1)
    assert verification_coverage(c) == (2 + 1) / 5
    # cannot-verify counts neither way: removing them leaves the accuracy as it was
    assert record_accuracy([x for x in c if x.verdict != "cannot_verify"]) == record_accuracy(c)
    assert record_accuracy(checks("cannot_verify")) is None and verification_coverage(checks("cannot_verify")) == 0
    assert record_accuracy([]) is None and verification_coverage([]) is None
    assert undefined_reason([]) == "the answer states no fact that the system of record holds"
    assert undefined_reason(checks("cannot_verify")).startswith("no fact could be verified (1 cannot verify: down")
    assert undefined_reason(c) is None
    assert count(["pass", "not_applicable", "unable_to_verify"]).coverage == 1 / 2
    with pytest.raises(ValueError):
        count(["maybe"])


STALE = json.loads((WARRANTY / "stale_fact.jsonl").read_text())


def facts_reply(user_text: str) -> dict:
    """The judge's answer for the stale-fact case: one fact, and one pointing at no claim."""
    assert "replacement_price" in user_text and "R2: the customer's router model" in user_text
    return {"facts": [{"claim_id": 1, "entity": "R2", "attribute": "Replacement Price", "value": "$89", "unit": None},
                      {"claim_id": 7, "entity": "R1", "attribute": "replacement_price", "value": "$59",
                       "unit": None}]}


def stale_request(table: TableSource) -> JudgeRequest:
    claims = [Claim(i, t) for i, t in enumerate(STALE["answer_claims"], start=1)]
    inputs = fact_inputs(STALE["question"], claims, attributes=table.attributes,
                         entities=STALE["metadata"]["entities"])
    return JudgeRequest(load_prompt("facts.extract"), inputs, FACTS_SCHEMA, "facts")




def test_facts_through_the_scripted_judge_and_the_stale_chunk():
    table = TableSource(WARRANTY / "records.jsonl")
    judge = Judge(ScriptedBackend(lambda pid, inputs, messages: facts_reply(messages[1]["content"])))
    j = judge.run([stale_request(table)])[0]
    assert j.ok
    facts, problems = parse_facts(j.value, claim_ids=[1], attributes=table.attributes)
    assert facts == [Fact("R2", "replacement_price", "$89", None, 1)]
    assert problems == ["fact 2 points at claim 7, which does not exist"]
    checks = check_facts_sync(facts, RecordLookup(table))
    assert [c.verdict for c in checks] == ["fail"] and checks[0].record == RecordValue(99, "USD")
    assert record_accuracy(checks) == 0 / (0 + 1)
    # the claim is supported by the stale price list: faithful, and wrong in the system of record
    evidence = Evidence(answer_claims=(Claim(1, STALE["answer_claims"][0]),),
                        verdicts={"answer@context": (Verdict(1, "supported", ("price-list-2025",), False,
                                                             "the R2 costs $89"),)})
    stale, not_checked = find_stale_chunks(evidence, checks)
    assert not_checked is None and [s.chunks for s in stale] == [("price-list-2025",)]
    assert stale[0].evidence == ('claim 1 "An out-of-warranty replacement R2 costs $89." is supported by '
                                 'price-list-2025 ("the R2 costs $89"), but the record says replacement_price of R2 '
                                 'is 99 USD')


def test_facts_through_the_http_test_judge():
    server, state = judge_server.start(lambda text, payload: facts_reply(text))
    try:
        table = TableSource(WARRANTY / "records.jsonl")
        judge = Judge(OpenAIBackend("gpt-test", base_url=state.url + "/v1", api_key="k"))
        j = judge.run([stale_request(table)])[0]
        assert j.ok and j.value["facts"][0]["value"] == "$89"
        fmt = state.requests[0]["payload"]["response_format"]
        assert fmt["json_schema"]["name"] == "facts" and fmt["json_schema"]["schema"] == FACTS_SCHEMA
        assert fmt["json_schema"]["strict"] is True
        again = Judge(OpenAIBackend("gpt-test", base_url=state.url + "/v1", api_key="k"), ledger=judge.ledger)
        again.run([stale_request(table)])
        assert state.count == 1  # the ledger answered the rerun
    finally:
        server.shutdown()
        server.server_close()




def test_check_facts_is_async_first():
    table = TableSource(WARRANTY / "records.jsonl")
    from ragmeter.records import check_facts

    out = asyncio.run(check_facts([Fact("R1", "warranty", "12 months")], RecordLookup(table)))
    assert [c.verdict for c in out] == ["pass"]


