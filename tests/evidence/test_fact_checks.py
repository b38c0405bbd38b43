"""``evidence/fact_checks.py``: the answer's facts checked against the records: given facts need
no judge; without records, or without a judge to extract them, each sample says why."""

from __future__ import annotations

import json

import pytest

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Sample
from ragmeter.evidence.fact_checks import NO_JUDGE_FACTS, NO_RECORDS
from ragmeter.evidence.matrix import Unavailable
from ragmeter.records import RecordLookup, TableSource
from tests.evidence.gathering import gather
from tests.records.test_lookup import WARRANTY_RECORDS

STALE = json.loads((WARRANTY_RECORDS.parent / "stale_fact.jsonl").read_text().splitlines()[0])


def _sample(**metadata) -> Sample:
    return Sample(id=STALE["id"], question=STALE["question"], answer=STALE["answer"], metadata=metadata)


def test_given_facts_are_checked_against_the_records_without_a_judge():
    """The warranty sample's stale fact: the answer says the R2 replacement costs $89, the record
    holds 99 USD."""
    lookup = RecordLookup(TableSource(WARRANTY_RECORDS))
    (ev,), seen = gather([_sample(facts=STALE["metadata"]["facts"])], {"facts"}, records=lookup)
    ((check,),) = [ev.facts]
    assert (check.fact.entity, check.fact.attribute, check.verdict) == ("R2", "replacement_price", "fail")
    assert check.record.value == 99 and seen == []


def test_each_sample_says_why_it_has_no_facts():
    lookup = RecordLookup(TableSource(WARRANTY_RECORDS))
    (no_records,), _ = gather([_sample(facts=STALE["metadata"]["facts"])], {"facts"})
    (no_judge,), _ = gather([_sample()], {"facts"}, records=lookup)
    assert no_records.facts == Unavailable(NO_RECORDS) and no_judge.facts == Unavailable(NO_JUDGE_FACTS)
    with pytest.raises(InvalidInputError, match="fact 1 needs a string entity and attribute and a value"):
        gather([_sample(facts=[{"entity": "R2"}])], {"facts"}, records=lookup)
