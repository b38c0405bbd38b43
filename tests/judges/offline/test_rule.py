"""``ragmeter.judges.offline.rule``: from evidence rows to one verdict and its support, and the shipped constants."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from ragmeter.judges.offline.rule import RULE_PATH, SIGNALS, EvidenceRule, load_rule

# p(row) = 1 / (1 + exp(-(5 words + 5 sentence - 6)))
RULE = EvidenceRule(w_words=5.0, w_tokens=0.0, w_sentence=5.0, w_aligned_words=0.0, bias=-6.0, t_found=0.4,
                    t_supported=0.7, t_sure=0.95, t_ask=0.95, m_supported=0.0, m_contradicted=-1.0)


def row(passage="p", words=0.0, sentence=0.0, **kw):
    base = {"claim": 1, "passage": passage, "words": words, "tokens": 0.0, "sentence": sentence,
            "aligned_words": words, "amounts": 0, "amounts_found": 0, "amounts_conflict": 0, "names": 0,
            "names_missing": 0, "negation_flip": False}
    return {**base, **kw}


def test_the_support_is_the_logistic_of_the_weighted_signals():
    assert RULE.support(row(words=1.0, sentence=0.9)) == pytest.approx(1 / (1 + math.exp(-(5 + 4.5 - 6))))
    assert RULE.support(row(words=0.6, sentence=0.6)) == pytest.approx(0.5)
    every = EvidenceRule(w_words=1, w_tokens=2, w_sentence=3, w_aligned_words=4, bias=-5)
    r = row(words=0.1, sentence=0.3, tokens=0.2, aligned_words=0.4)
    assert every.support(r) == pytest.approx(1 / (1 + math.exp(-(0.1 + 0.4 + 0.9 + 1.6 - 5))))
    assert SIGNALS == ("words", "tokens", "sentence", "aligned_words")


def test_the_passage_that_supports_best_decides_and_is_the_only_source():
    rows = [row("a", words=0.6, sentence=0.6), row("b", words=1.0, sentence=0.9)]
    assert RULE.deciding(rows) is rows[1] and RULE.decide(rows) == ("supported", ["b"])


def test_below_t_found_nothing_is_cited():
    assert RULE.decide([row("a", words=0.4, sentence=0.4, amounts_conflict=1)]) == ("not_found", [])
    assert RULE.decide([]) == ("not_found", [])


def test_a_conflicting_amount_or_a_flipped_negation_contradicts():
    assert RULE.decide([row("a", words=0.8, sentence=0.8, amounts_conflict=1)]) == ("contradicted", ["a"])
    flipped = row("a", words=0.8, sentence=0.8, negation_flip=True)
    assert RULE.decide([flipped]) == ("contradicted", ["a"])
    assert dataclasses.replace(RULE, negation=False).decide([flipped]) == ("supported", ["a"])


def test_between_the_thresholds_the_claim_is_not_found():
    assert RULE.decide([row(words=0.6, sentence=0.6)]) == ("not_found", [])  # p = 0.5


def test_require_complete_asks_every_name_and_amount():
    incomplete = row("a", words=0.9, sentence=0.9, names=1, names_missing=1)
    assert RULE.decide([incomplete])[0] == "supported"
    assert dataclasses.replace(RULE, require_complete=True).decide([incomplete])[0] == "not_found"


def test_the_models_log_ratio_decides_where_it_was_asked():
    uncertain = row("a", words=0.8, sentence=0.8)  # p = 0.881: found, below t_ask
    assert RULE.uncertain([uncertain]) and not RULE.uncertain([row(words=1.0, sentence=1.0)])

    def asked(s, c):
        return [{**uncertain, "model": {"supported": s, "contradicted": c, "unmentioned": 1 - s - c}}]
    assert RULE.decide(asked(0.7, 0.2)) == ("supported", ["a"])  # log 0.7 - log 0.2 >= 0
    assert RULE.decide(asked(0.3, 0.4))[0] == "not_found"  # -1 <= log(0.3 / 0.4) < 0
    assert math.log(0.1 + 1e-9) - math.log(0.8 + 1e-9) < -1 and RULE.decide(asked(0.1, 0.8)) == ("contradicted", ["a"])
    # the evidence decides a claim it is sure of, whatever a stored answer says
    sure = {**row("a", words=1.0, sentence=1.0), "model": {"supported": 0.1, "contradicted": 0.8, "unmentioned": 0.1}}
    assert RULE.decide([sure]) == ("supported", ["a"])


def test_where_the_model_decides_its_supported_stands_below_t_supported():
    weak = row("a", words=0.65, sentence=0.65)  # p = 0.62: found, below t_supported (0.7)
    yes = [{**weak, "model": {"supported": 0.7, "contradicted": 0.2, "unmentioned": 0.1}}]
    assert RULE.decide([weak]) == ("not_found", []) and RULE.decide(yes) == ("not_found", [])  # it only demotes
    assert dataclasses.replace(RULE, model_decides=True).decide(yes) == ("supported", ["a"])


def test_verdicts_build_the_verify_reply_and_the_support_goes_beside_it():
    rows = [row("a", words=1.0, sentence=1.0), {**row("a", words=0.6, sentence=0.6), "claim": 2},
            {**row("a", words=0.8, sentence=0.8), "claim": 3},
            {**row("a", words=0.8, sentence=0.8, amounts_conflict=1), "claim": 4}]
    plain = RULE.verdicts(rows, [1, 2, 3, 4])["verdicts"]
    assert plain[:2] == [{"id": 1, "verdict": "supported", "sources": ["a"], "combined": False, "quote": ""},
                         {"id": 2, "verdict": "not_found", "sources": [], "combined": False, "quote": ""}]
    assert all("support" not in v for v in plain)  # the reply's schema has no room for it
    scored = RULE.verdicts(rows, [1, 2, 3, 4], support=True)["verdicts"]
    # decisive (p = 0.982 >= t_sure): full credit; uncertain: p itself; contradicted: none
    assert [v["support"] for v in scored] == [1.0, 0.5, round(1 / (1 + math.exp(-2)), 4), 0.0]
    assert [v["verdict"] for v in scored] == ["supported", "not_found", "supported", "contradicted"]


def test_the_shipped_constants_say_what_they_were_fitted_on():
    data = json.loads(RULE_PATH.read_text())
    fields = {f.name for f in dataclasses.fields(EvidenceRule)}
    assert set(data["constants"]) <= fields and data["fitted_on"] and data["version"] == 2
    assert {f"w_{s}" for s in SIGNALS} | {"bias"} <= set(data["constants"])
    rule = load_rule()
    assert rule.t_found <= rule.t_supported <= rule.t_sure and rule.fitted_on == data["fitted_on"]
    cv = data["measured"]["mtrag_leave_one_conversation_out"]
    assert cv["n"] == 216 and cv["conversations"] == 10


def test_the_model_is_asked_below_t_ask_only():
    """t_ask (the model stage's band) is fitted apart from t_sure (full credit), so turning the
    stage on leaves the evidence's own verdicts and credit as they were above it."""
    rule = dataclasses.replace(RULE, t_ask=0.8)
    uncertain = row("a", words=0.8, sentence=0.8)  # p = 0.881: below t_sure (0.95), above t_ask
    assert RULE.uncertain([uncertain]) and not rule.uncertain([uncertain])
    doubted = [{**uncertain, "model": {"supported": 0.1, "contradicted": 0.8, "unmentioned": 0.1}}]
    assert RULE.decide(doubted)[0] == "contradicted" and rule.decide(doubted) == ("supported", ["a"])


def test_a_verdict_carries_the_models_answer_where_it_was_asked():
    """The new-user trial: under --judge local:model nothing showed what the model answered."""
    from ragmeter.evidence.matrix import Evidence, Verdict

    uncertain = row("a", words=0.8, sentence=0.8)
    asked = {**uncertain, "model": {"supported": 0.7, "contradicted": 0.2, "unmentioned": 0.1}}
    sure = {**row("b", words=1.0, sentence=1.0), "claim": 2,
            "model": {"supported": 0.1, "contradicted": 0.8, "unmentioned": 0.1}}  # stored, not counted
    reply = RULE.verdicts([asked, sure, {**uncertain, "claim": 3}], [1, 2, 3], support=True)["verdicts"]
    assert reply[0]["model"] == round(math.log(0.7 + 1e-9) - math.log(0.2 + 1e-9), 4)
    assert "model" not in reply[1] and "model" not in reply[2]  # evidence decided; never asked
    assert "model" not in RULE.verdicts([asked], [1])["verdicts"][0]  # the reply the schema checks
    ev = Evidence(verdicts={"answer@context": (Verdict(1, "supported", ("a",), False, "", 0.881, 1.2528),
                                               Verdict(2, "supported", ("b",), False, "", 1.0))})
    written = ev.as_dict()["verdicts"]["answer@context"]
    assert written[0]["model"] == 1.2528 and "model" not in written[1]
    assert Evidence.from_dict(ev.as_dict()) == ev
