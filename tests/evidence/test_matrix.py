"""``evidence/matrix.py``: a sample's evidence as data, written by ``as_dict`` and read back by
``from_dict`` (a run's ``results.jsonl`` through JSON), and the names needs are written in."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from ragmeter.evidence.matrix import (
    Claim,
    Evidence,
    Unavailable,
    Verdict,
    need_argument,
    need_kind,
    with_argument,
)
from ragmeter.records.facts import Fact, FactCheck
from ragmeter.records.types import RecordValue

TEXT = st.text(max_size=20)
UNAVAILABLE = st.builds(Unavailable, TEXT, st.booleans())
CLAIMS = st.lists(st.builds(Claim, st.integers(1, 9), TEXT, st.none() | st.booleans(),
                            st.lists(TEXT, max_size=2).map(tuple)), max_size=3).map(tuple)
VERDICTS = st.lists(st.builds(Verdict, st.integers(1, 9), st.sampled_from(["supported", "contradicted", "not_found"]),
                              st.lists(TEXT, max_size=2).map(tuple), st.booleans(), TEXT,
                              st.none() | st.floats(0, 1)), max_size=3).map(tuple)
EVIDENCE = st.builds(
    Evidence, answer_claims=st.none() | UNAVAILABLE | CLAIMS, declines=st.none() | UNAVAILABLE | st.booleans(),
    reference_claims=st.none() | UNAVAILABLE | CLAIMS,
    verdicts=st.dictionaries(st.sampled_from(["answer@context", "reference@answer"]), UNAVAILABLE | VERDICTS),
    sentences=st.lists(TEXT, max_size=3).map(tuple),
    needed_sentences=st.none() | UNAVAILABLE | st.lists(st.integers(1, 9), max_size=3).map(tuple),
    questions=st.none() | UNAVAILABLE | st.lists(TEXT, max_size=3).map(tuple), noncommittal=st.none() | st.booleans(),
    rubric=st.dictionaries(st.sampled_from(["tone", "relevance"]),
                           UNAVAILABLE | st.fixed_dictionaries({"score": st.integers(1, 5), "reason": TEXT,
                                                                "weighted": st.none() | st.floats(1, 5)})),
    standalone=st.none() | UNAVAILABLE | st.booleans(), actions=st.none() | UNAVAILABLE, calls=st.integers(0, 9))


@given(EVIDENCE)
def test_from_dict_reads_back_what_as_dict_wrote_through_json(ev):
    assert Evidence.from_dict(json.loads(json.dumps(ev.as_dict()))) == ev


def test_a_verdict_without_support_writes_none():
    """Only the offline judge weighs support: every other judge's evidence reads as before."""
    plain, weighed = Verdict(1, "supported", ("a",), False, ""), Verdict(1, "supported", ("a",), False, "", 0.75)
    verdicts = Evidence(verdicts={"answer@context": (plain, weighed)}).as_dict()["verdicts"]["answer@context"]
    assert "support" not in verdicts[0] and verdicts[1]["support"] == 0.75


def test_fact_checks_are_read_back_too():
    check = FactCheck(Fact("R2", "replacement_price", "$89", None, 1), "fail", RecordValue(99, "USD"), "99 USD", "t")
    ev = Evidence(facts=(check,))
    assert Evidence.from_dict(json.loads(json.dumps(ev.as_dict()))) == ev


def test_need_names():
    assert with_argument("rubric", "tone") == "rubric:tone"
    assert (need_kind("rubric:tone"), need_argument("rubric:tone")) == ("rubric", "tone")
    assert (need_kind("answer@context"), need_argument("answer@context")) == ("answer@context", "")
