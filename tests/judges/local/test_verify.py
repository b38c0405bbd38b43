"""The local judge's decision rule, its fitting and grouped cross-validation, and the verification
plan, without the model (the passage preselection: ``test_preselect.py``)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.judges.local import verdict_rule as V
from ragmeter.judges.local.verify import SKIP_MARGIN, VerifySettings, verdict_rows
from tests.judges.local.test_preselect import Words

ROW = {"claim": 1, "passage": "a", "supported": 0.5, "contradicted": 0.3, "unmentioned": 0.2, "yes": 0.5}


def test_the_uncertain_band_is_not_found_never_supported():
    rule = V.VerdictRule(bias_unmentioned=0.0, yes_threshold=0.7, contradicted_below=0.3)
    assert rule.decide([{**ROW, "yes": 0.7}]) == ("supported", ["a"])
    assert rule.decide([{**ROW, "yes": 0.69}]) == ("not_found", [])  # between t_c and t_s
    assert rule.decide([{**ROW, "yes": 0.3}]) == ("not_found", [])
    assert rule.decide([{**ROW, "yes": 0.29}]) == ("contradicted", ["a"])
    # without a band (contradicted_below=None) the rule is the earlier two-way one
    assert V.VerdictRule(yes_threshold=0.7).decide([{**ROW, "yes": 0.69}]) == ("contradicted", ["a"])


def test_skipped_passages_and_skipped_questions_are_not_evidence():
    rule = V.VerdictRule(bias_unmentioned=0.0, yes_threshold=0.5)
    skipped = {"claim": 1, "passage": "b", "skipped": "preselection", "cosine": 0.1}
    assert rule.decide([skipped]) == ("not_found", [])  # nothing checked: nothing found
    assert rule.decide([skipped, ROW]) == ("supported", ["a"])
    # mentioned, but the yes/no question was never asked (skipped under a stricter rule): not found
    assert rule.decide([{**ROW, "yes": None}]) == ("not_found", [])


rows_strategy = st.lists(st.fixed_dictionaries({
    "supported": st.floats(0, 1), "contradicted": st.floats(0, 1), "unmentioned": st.floats(0, 1),
    "yes": st.one_of(st.none(), st.floats(0, 1))}), min_size=0, max_size=4)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(rows=rows_strategy, b=st.sampled_from(V.BIASES), ts=st.sampled_from(V.THRESHOLDS),
       tc=st.sampled_from(V.THRESHOLDS))
def test_the_vectorised_rule_equals_decide(rows, b, ts, tc):
    rows = [{**r, "claim": 1, "passage": f"p{i}"} for i, r in enumerate(rows)]
    rule = V.VerdictRule(bias_unmentioned=b, yes_threshold=ts, contradicted_below=min(ts, tc))
    claims = V.Claims.from_rows([("ctx", "supported", rows)])
    assert V.LABELS[int(V.predict(rule, claims)[0])] == rule.decide(rows)[0]


def _claims(per_context: dict[str, list[tuple[str, float, float]]]) -> V.Claims:
    """(label, P(unmentioned), P(yes)) per claim; P(supported) = P(contradicted) = (1 - u) / 2."""
    rows = [(ctx, label, [{"claim": 1, "passage": "p", "supported": (1 - u) / 2, "contradicted": (1 - u) / 2,
                           "unmentioned": u, "yes": y}])
            for ctx, items in per_context.items() for label, u, y in items]
    return V.Claims.from_rows(rows)


@pytest.mark.slow
def test_fit_finds_the_separating_rule_and_penalises_contradictions_called_supported():
    claims = _claims({"a": [("supported", 0.1, 0.9), ("contradicted", 0.1, 0.1), ("not_found", 0.9, 0.5)] * 3})
    rule = V.fit(claims)
    assert (V.predict(rule, claims) == claims.labels).all()
    # a contradicted claim with P(yes) above a supported one's: one of them must be wrong; the
    # penalty makes the fit give up the supported one rather than call the contradiction supported
    hard = _claims({"a": [("supported", 0.1, 0.6), ("contradicted", 0.1, 0.7)]})
    pred = V.predict(V.fit(hard), hard)
    assert pred[1] != 0 and pred[0] != 0


@pytest.mark.slow
def test_cross_validation_judges_each_context_with_a_rule_fitted_without_it():
    # four contexts agree on "yes >= 0.5 means supported"; the fifth has its labels inverted, so a
    # rule fitted without it gets it all wrong, while it cannot outweigh the others in their folds
    good = [("supported", 0.1, 0.9), ("contradicted", 0.1, 0.1)] * 2
    claims = _claims({"a": good, "b": good, "c": good, "e": good,
                      "d": [("contradicted", 0.1, 0.9), ("supported", 0.1, 0.1)] * 2})
    cv = V.cross_validate(claims)
    for group, rule in cv.rules.items():
        assert rule == V.fit(claims.subset(claims.groups != group))
    d = claims.groups == "d"
    assert (cv.predicted[d] != claims.labels[d]).all() and (cv.predicted[~d] == claims.labels[~d]).all()
    assert cv.accuracy == pytest.approx(16 / 20)
    assert cv.confusion()["contradicted"] == [2, 8, 0]
    lo, hi = cv.interval()
    assert 0 <= lo <= cv.accuracy <= hi <= 1
    assert cv.as_dict()["contradicted_called_supported"] == pytest.approx(2 / 10)


class _FakeLLM:
    """Fixed answers: P(unmentioned) 0.9 for claim 'absent', else 0.1; records what is asked."""

    def __init__(self):
        self.asked = []

    def ask(self, question, passage, claims, usage):
        self.asked.append((question.name, passage, tuple(claims)))
        if question.name.startswith("three"):
            return [{"supported": 0.05, "contradicted": 0.05, "unmentioned": 0.9} if c == "absent" else
                    {"supported": 0.6, "contradicted": 0.3, "unmentioned": 0.1} for c in claims]
        return [{"yes": 0.8, "no": 0.2} for _ in claims]


def test_the_yes_no_question_is_skipped_only_where_it_cannot_change_the_verdict():
    llm = _FakeLLM()
    rule = V.VerdictRule(bias_unmentioned=0.0, yes_threshold=0.5)
    passages = [("p1", "text one"), ("p2", "text two")]
    claims = [(1, "present"), (2, "absent")]
    rows = verdict_rows(llm, passages, claims, VerifySettings(questions="short", skip_second=True), rule, None)
    assert [(r["claim"], r["passage"], r["yes"]) for r in rows] == [(1, "p1", 0.8), (2, "p1", None),
                                                                    (1, "p2", 0.8), (2, "p2", None)]
    assert [a for a in llm.asked if a[0].startswith("yes")] == [("yes_no_short", "text one", ("present",)),
                                                                ("yes_no_short", "text two", ("present",))]
    assert rule.verdicts(rows, [1, 2])["verdicts"][1]["verdict"] == "not_found"
    # the skip used the rule's bias less SKIP_MARGIN: a rule that is that much less eager to say
    # not_found re-scores the stored rows exactly
    log_gap = math.log(0.9) - math.log(0.05)
    assert V.VerdictRule(bias_unmentioned=-log_gap + SKIP_MARGIN / 2).decide([r for r in rows if r["claim"] == 2])[0] \
        == "not_found"


def test_preselected_verification_records_the_skipped_passages():
    llm = _FakeLLM()
    rule = V.VerdictRule()
    passages = [("p1", "the motor is covered"), ("p2", "filters are consumables")]
    rows = verdict_rows(llm, passages, [(1, "the motor is covered")], VerifySettings(top_k=1), rule, None,
                        embedder=Words())
    assert [r for r in rows if "skipped" in r] == [{"claim": 1, "passage": "p2", "skipped": "preselection",
                                                    "cosine": pytest.approx(0.0)}]
    assert all(p == "the motor is covered" for _, p, _ in llm.asked)


@pytest.mark.slow
def test_cross_validation_can_fit_on_every_passage_and_judge_the_preselected_ones():
    good = [("supported", 0.1, 0.9), ("contradicted", 0.1, 0.1)] * 2
    every = _claims({"a": good, "b": good, "c": good})
    fewer = _claims({"a": good, "b": good, "c": [("supported", 0.9, 0.9), ("contradicted", 0.1, 0.1)] * 2})
    cv = V.cross_validate(fewer, fit_on=every)
    for group, rule in cv.rules.items():
        assert rule == V.fit(every.subset(every.groups != group))
    c = fewer.groups == "c"  # its supported claims now look unmentioned: judged not found by the every-passage rule
    assert [V.LABELS[p] for p in cv.predicted[c]] == ["not_found", "contradicted"] * 2
    with pytest.raises(ValueError, match="same claims"):
        V.cross_validate(fewer.subset(fewer.groups != "c"), fit_on=every)
