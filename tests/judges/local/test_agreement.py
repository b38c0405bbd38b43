"""``judges/local/agreement.py``: what the bundled local judge was measured to do holds together
(each accuracy is its confusion matrix's diagonal over its count), is claimed for the bundled
model with its fitted rule only, and decides which prompts it refuses."""

from __future__ import annotations

import pytest

from ragmeter.judges.local import agreement as A
from ragmeter.judges.local.model import BUNDLED_SHA256
from ragmeter.judges.local.verdict_rule import VerdictRule
from ragmeter.judges.local.verify import VerifySettings


@pytest.mark.parametrize("settings", list(A.FITTED))
def test_each_measured_agreement_is_its_confusion_matrix(settings):
    m = A.FITTED[settings][1]
    rows = list(m["confusion"].values())
    correct = sum(row[i] for i, row in enumerate(rows))
    assert sum(map(sum, rows)) == m["n"] and m.get("correct", correct) == correct
    assert m["accuracy"] == pytest.approx(correct / m["n"], abs=5e-4)  # as rounded where it is written
    lo, hi = m.get("interval95", (0, 1))
    assert lo < m["accuracy"] < hi


def test_the_default_settings_numbers():
    m = A.FITTED[A.DEFAULT_SETTINGS][1]
    contradicted = m["confusion"]["contradicted"]  # columns: judged supported, contradicted, not found
    assert m["contradicted_called_supported"] == pytest.approx(contradicted[0] / sum(contradicted))
    assert A.rule_for(A.DEFAULT_SETTINGS) == A.DEFAULT_RULE and A.rule_for(VerifySettings(top_k=99)) is None


@pytest.mark.parametrize("prompt", list(A.PROMPTS))
def test_each_prompt_part_against_its_majority_rule(prompt):
    m = A.PROMPTS[prompt]
    (yes_yes, yes_no), (no_yes, no_no) = m["confusion"]["yes"], m["confusion"]["no"]
    assert yes_yes + yes_no + no_yes + no_no == m["n"]
    assert m["accuracy"] == pytest.approx((yes_yes + no_no) / m["n"], abs=5e-5)
    majority = max(yes_yes + yes_no, no_yes + no_no) / m["n"]
    assert m["baseline"]["accuracy"] == pytest.approx(majority, abs=5e-5)
    assert m["accuracy"] > m["baseline"]["accuracy"]  # served: it beats the trivial rule
    assert A.refusal(prompt, BUNDLED_SHA256) is None


def test_agreement_is_claimed_for_the_bundled_model_with_its_fitted_rule_only():
    measured = A.measured(BUNDLED_SHA256, A.DEFAULT_SETTINGS, A.DEFAULT_RULE)
    assert measured is not None and measured["prompts"] is A.PROMPTS and measured["n"] == 216
    assert A.measured("0" * 64, A.DEFAULT_SETTINGS, A.DEFAULT_RULE) is None
    assert A.measured(BUNDLED_SHA256, A.DEFAULT_SETTINGS, VerdictRule(yes_threshold=0.9)) is None
    assert A.measured(BUNDLED_SHA256, VerifySettings(top_k=99), A.DEFAULT_RULE) is None


def test_what_is_refused_and_why(monkeypatch):
    assert A.refusal("claims.verify", "0" * 64) is None  # measured as a whole through the verdicts
    assert A.refusal("rubric.score", BUNDLED_SHA256).startswith("the local judge's answers to rubric.score have not")
    assert "have not been measured" in A.refusal("context.relevance", "0" * 64)  # another model: not measured
    monkeypatch.setitem(A.PROMPTS, "context.relevance", {
        "n": 64, "accuracy": 0.6, "baseline": {"rule": "always no (majority class)", "accuracy": 0.66}})
    assert "'always no (majority class)' (0.60 vs 0.66 on 64 labeled items)" in A.refusal("context.relevance",
                                                                                          BUNDLED_SHA256)
