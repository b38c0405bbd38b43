"""The local judge's decision rule across several passages (``judges/local/verdict_rule.py``, ``pool``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.judges.local import verdict_rule as V
from ragmeter.judges.local.agreement import DEFAULT_RULE as SHIPPED

# the shipped constants (bias 0.7, log-ratio threshold 0) with each passage deciding alone
BY_PASSAGE = V.VerdictRule(bias_unmentioned=SHIPPED.bias_unmentioned, yes_threshold=SHIPPED.yes_threshold,
                           score="log_ratio", pool="passage")


def _row(passage: str, s: float, c: float, n: float) -> dict:
    return {"claim": 1, "passage": passage, "supported": s, "contradicted": c, "unmentioned": n}


STATES = _row("p1", 0.75, 0.2, 0.05)  # the passage that states the claim
OFF_TOPIC = _row("p2", 0.1, 0.85, 0.05)  # another passage, which a small model calls contradicting


def test_a_claim_one_passage_states_is_supported_whatever_another_seems_to_say():
    """A claim checked against the passage that states it and a second one sharing a name with
    it: pooled maxima weigh the second's P(contradicted) 0.85 against the first's P(supported)
    0.75 and call the claim contradicted; with each passage deciding, the first one's support wins."""
    assert BY_PASSAGE.decide([STATES, OFF_TOPIC]) == ("supported", ["p1"])
    assert BY_PASSAGE.decide([OFF_TOPIC, STATES]) == ("supported", ["p1"])
    assert SHIPPED.pool == "max" and SHIPPED.decide([STATES, OFF_TOPIC])[0] == "contradicted"


def test_contradicted_needs_a_passage_that_contradicts_and_none_that_supports():
    silent = _row("p3", 0.05, 0.05, 0.9)
    assert BY_PASSAGE.decide([OFF_TOPIC, silent]) == ("contradicted", ["p2"])
    assert BY_PASSAGE.decide([silent, _row("p4", 0.1, 0.1, 0.8)]) == ("not_found", [])
    assert BY_PASSAGE.decide([silent]) == ("not_found", [])
    for rows in ([STATES], [OFF_TOPIC], [silent]):  # one passage: nothing to pool, the same verdict
        assert BY_PASSAGE.decide(rows) == SHIPPED.decide(rows)


def test_pool_passage_is_for_the_three_way_score():
    with pytest.raises(ValueError, match="pool"):
        V.VerdictRule(pool="passage")  # score="yes": not supported
    with pytest.raises(ValueError, match="pool"):
        V.VerdictRule(score="log_ratio", pool="mean")


rows_strategy = st.lists(st.fixed_dictionaries({
    "supported": st.floats(0, 1), "contradicted": st.floats(0, 1), "unmentioned": st.floats(0, 1)}),
    min_size=0, max_size=4)


@settings(max_examples=300, deadline=None)
@given(per_claim=st.lists(rows_strategy, min_size=1, max_size=4), b=st.sampled_from(V.BIASES),
       ts=st.sampled_from(V.LOG_RATIOS), tc=st.sampled_from(V.LOG_RATIOS))
def test_the_vectorised_passage_rule_equals_decide(per_claim, b, ts, tc):
    rule = V.VerdictRule(bias_unmentioned=b, yes_threshold=ts, contradicted_below=min(ts, tc), score="log_ratio",
                         pool="passage")
    items = [("ctx", "supported", [{**r, "claim": 1, "passage": f"p{i}"} for i, r in enumerate(rows)])
             for rows in per_claim]
    claims = V.Claims.from_rows(items)
    got = [V.LABELS[int(i)] for i in V.predict(rule, claims)]
    assert got == [rule.decide(rows)[0] for _, _, rows in items]
    half = np.arange(len(items)) % 2 == 0  # subsets keep each claim's rows
    assert [V.LABELS[int(i)] for i in V.predict(rule, claims.subset(half))] == [g for g, h in zip(got, half) if h]


def test_fit_and_cross_validation_search_the_passage_rule():
    """Two contexts where support sits in one passage and an off-topic passage looks contradicting:
    the passage rule fits them all, and the cross-validated verdicts are its."""
    def ctx(name: str) -> list:  # pooled, the supported claim's log s - log c (-0.24) is below the contradicted's
        return [(name, "supported", [STATES, _row("p2", 0.04, 0.95, 0.01)]),
                (name, "contradicted", [_row("p2", 0.45, 0.5, 0.05)]),
                (name, "not_found", [_row("p3", 0.05, 0.05, 0.9)])]
    claims = V.Claims.from_rows(ctx("a") + ctx("b"))
    rule = V.fit(claims, score="log_ratio", pool="passage")
    assert rule.pool == "passage" and (V.predict(rule, claims) == claims.labels).all()
    assert V.cross_validate(claims, score="log_ratio", pool="passage").accuracy == 1.0
    assert V.cross_validate(claims, score="log_ratio").accuracy < 1.0  # pooled maxima cannot
