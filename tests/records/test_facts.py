"""Facts against the system of record: normalisation known answers, verdicts, record accuracy
and coverage, the fact-extraction prompt through the scripted and the HTTP test judge, and the
stale-chunk finder on the warranty sample's stale-fact case."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.evidence.matrix import Claim, Evidence, Unavailable, Verdict
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
    compare,
    fact_inputs,
    find_stale_chunks,
    judge_fact,
    parse_facts,
    read_date,
    read_quantity,
    record_accuracy,
    verification_coverage,
)
from ragmeter.records.facts import undefined_reason
from ragmeter.records.verdicts import count
from tests import judge_server

ROOT = Path(__file__).resolve().parents[2]
WARRANTY = ROOT / "examples" / "warranty"

E, D, U = "equal", "different", "undecidable"

NUMBERS_WITH_UNITS = [
    ("24 months", None, 24, "months", E),
    ("two years", None, "24 months", None, E),
    ("twenty-four", "months", 24, "months", E),
    ("1.5 years", None, 18, "months", E),
    ("2 weeks", None, "14 days", None, E),
    ("48 hours", None, 2, "days", E),
    ("a year", None, 12, "months", E),
    ("12", None, 24, "months", D),
    ("5 business days", None, "5 days", None, U),  # business and calendar days do not convert
    ("24 months", None, "730 days", None, U),  # months and days do not convert exactly
    ("12 kg", None, 12, "kg", E),
    ("12 kg", None, 12, "lb", U),  # units ragmeter does not know: only the same word matches
    ("$24", None, "24 months", None, D),  # a price where the record holds a duration
    ("3-5 business days", None, 5, "business days", U),  # a range is not one value
    ("about 1,300", None, 1299, None, U),  # an approximation is not checked
    ("twelve", None, 12, None, E),
    ("one hundred and five", None, 105, None, E),
    ("1,000,000", None, 1_000_000, None, E),
    ("1 000 000", None, 1_000_000, None, E),
    ("-3", None, -3, None, E),
    ("1,5", None, 1.5, None, E),  # a decimal comma (a group of one digit is not thousands)
    ("1,500", None, 1500, None, E),  # thousands
    ("1299", None, "1,299.00", None, E),
]
CURRENCY = [
    ("$1,299.00", None, 1299, "USD", E),
    ("USD 1,299", None, 1299, "USD", E),
    ("1299 dollars", None, "$1,299", None, E),
    ("1.299,00 €", None, 1299, "EUR", E),
    ("€1,299", None, 1299, "USD", D),
    ("£5", None, 5, "GBP", E),
    ("$1.2 million", None, 1_200_000, "USD", E),
    ("1.2k", "USD", 1200, "USD", E),
    ("$1,299", None, 1299, "CAD", E),  # "$" is any dollar
    ("US$1,299", None, 1299, "CAD", D),
    ("$89", None, 99, "USD", D),
    ("12.5%", None, 12.5, "%", E),
    ("12.5 percent", None, 12.5, "%", E),
    ("0.125", None, 12.5, "%", U),  # a fraction or a percentage
    ("13%", None, 12.5, "%", D),
]
DATES = [(s, None, "2026-10-05", None, E) for s in (
    "2026-10-05", "5 October 2026", "October 5, 2026", "Oct. 5th, 2026", "Monday, 5 October 2026", "5.10.2026",
    "2026/10/05", "2026-10-05T14:30:00Z", "5-Oct-26", "the 5th of October 2026".removeprefix("the "),
    "on 5 October 2026")] + [
    ("13/10/2026", None, "2026-10-13", None, E),
    ("10/13/2026", None, "2026-10-13", None, E),
    ("05/10/2026", None, "2026-10-05", None, U),  # 5 October or May 10
    ("05/05/2026", None, "2026-05-05", None, E),  # both readings agree
    ("6 October 2026", None, "2026-10-05", None, D),
    ("05/11/2026", None, "2026-10-05", None, D),  # neither reading matches
    ("October 2026", None, "2026-10-05", None, U),  # the month only
    ("November 2026", None, "2026-10-05", None, D),
    ("31/02/2026", None, "2026-02-28", None, U),  # not a date
    ("soon", None, "2026-10-05", None, U),
]
TEXT = [
    ("Shipped", None, "shipped", None, E),
    ("In Transit", None, "IN_TRANSIT", None, E),
    ("  shipped. ", None, "shipped", None, E),
    ("delivered", None, "shipped", None, D),
    ("R2", None, "R2", None, E),
    ("yes", None, True, None, E),
    ("no", None, True, None, D),
    ("maybe", None, True, None, U),
    ("true", None, "Yes", None, E),
]


@pytest.mark.parametrize("stated,unit,recorded,recorded_unit,outcome", NUMBERS_WITH_UNITS + CURRENCY + DATES + TEXT)
def test_normalisation_known_answers(stated, unit, recorded, recorded_unit, outcome):
    assert compare(stated, unit, recorded, recorded_unit).outcome == outcome


def test_quantity_amounts_as_formulas():
    assert read_quantity("1.5 years").amount == Decimal("1.5") * 12 and read_quantity("1.5 years").unit == "month"
    assert read_quantity("2 weeks").amount == 2 * 7 * 24 * 3600
    assert read_quantity("48 hours").amount == 48 * 3600
    assert read_quantity("$1.2 million").amount == Decimal("1.2") * 1_000_000
    assert read_quantity("one hundred and twenty-five thousand").amount == (100 + 25) * 1000
    assert read_quantity("a dozen").amount == 12
    assert read_quantity("$5").currencies == {"USD", "CAD", "AUD", "NZD", "SGD", "HKD"}
    assert read_quantity("5 EUR").currencies == {"EUR"} and read_quantity("5 SEK").currencies == {"SEK"}
    assert read_quantity("$5 EUR") is None  # contradicts itself


def test_dates_known_answers():
    assert read_date("2026-10-05").candidates == {(2026, 10, 5)}
    assert read_date("05/10/2026").candidates == {(2026, 10, 5), (2026, 5, 10)}
    assert read_date("5/10/26").candidates == {(2026, 10, 5), (2026, 5, 10)}
    assert read_date("1/2/99").candidates == {(1999, 2, 1), (1999, 1, 2)}
    assert read_date("Sept 5 2026").candidates == {(2026, 9, 5)}
    assert read_date("29 February 2027") is None and read_date("29 February 2028").candidates == {(2028, 2, 29)}


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10**12))
def test_separators_never_change_a_number(n):
    assert compare(f"{n:,}", None, n).outcome == E
    assert compare(f"{n:,}".replace(",", " "), None, n).outcome == E
    assert compare(f"${n:,.2f}", None, n, "USD").outcome == E
    german = f"{n:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")
    assert compare(german + " €", None, n, "EUR").outcome == E
    assert compare(f"{n + 1:,}", None, n).outcome == D


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


@settings(max_examples=200, deadline=None)
@given(st.dates(min_value=dt.date(1970, 1, 1), max_value=dt.date(2099, 12, 31)))
def test_written_dates_equal_their_iso_form(d):
    iso = d.isoformat()
    for text in (f"{d.day} {MONTHS[d.month - 1]} {d.year}", f"{MONTHS[d.month - 1]} {d.day}, {d.year}",
                 f"{MONTHS[d.month - 1][:3]} {d.day} {d.year}", f"{d.day}.{d.month}.{d.year}", d.strftime("%Y/%m/%d")):
        assert compare(text, None, iso).outcome == E, text
    numeric = f"{d.day:02d}/{d.month:02d}/{d.year}"
    expected = E if d.day > 12 or d.day == d.month else U
    assert compare(numeric, None, iso).outcome == expected
    assert compare((d + dt.timedelta(days=1)).isoformat(), None, iso).outcome == D


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


def test_the_prompt_file():
    prompt = load_prompt("facts.extract")
    assert prompt.version == 1 and prompt.placeholders == {"question", "entities", "attributes", "claims"}
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(FACTS_SCHEMA)


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


def test_check_facts_is_async_first():
    table = TableSource(WARRANTY / "records.jsonl")
    from ragmeter.records import check_facts

    out = asyncio.run(check_facts([Fact("R1", "warranty", "12 months")], RecordLookup(table)))
    assert [c.verdict for c in out] == ["pass"]


def test_ambiguous_recorded_dates_are_not_guessed():
    assert compare("5 October 2026", None, "05/10/2026").outcome == U  # the record itself can mean two days
    assert compare("7 October 2026", None, "05/10/2026").outcome == D  # neither reading
    assert compare("October 2026", None, "2026-10").outcome == E
    assert compare("5 October 2026", None, "2026-10").outcome == U  # the record names only the month
