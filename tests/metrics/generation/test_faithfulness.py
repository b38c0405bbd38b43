"""Claim metrics from one shared claim matrix: the seed's q1 numbers, variants, coverage, calls."""

from __future__ import annotations

import dataclasses

import pytest

import ragmeter
from ragmeter.core.sample import Chunk, Sample
from ragmeter.judges import Judge, NoCallBackend, ScriptedBackend
from ragmeter.ledger import Ledger
from tests import seed_judge

FIVE_CALL_SET = ["faithfulness", "context_recall", "factual_correctness", "judged_context_precision",
                 "judged_context_precision(form='average_precision')", "context_utilization", "noise_sensitivity",
                 "noise_sensitivity(chunks='irrelevant')", "hallucination", "self_knowledge", "answer_relevancy",
                 "negative_rejection", "false_refusal"]


@pytest.fixture
def q1(warranty):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    return ragmeter.io.from_samples([data.samples[0]])


def scripted_judge(ledger=None):
    return Judge(ScriptedBackend(seed_judge.scripted), ledger=ledger)


def means(result):
    return {k: (None if v is None else round(v, 3)) for k, v in result.means().items()}


def test_seed_q1_numbers(q1):
    result = ragmeter.evaluate(q1, FIVE_CALL_SET + ["context_relevance", "faithfulness(unsupported='pass')",
                                                    "factual_correctness(mode='precision')",
                                                    "factual_correctness(mode='recall')"],
                               judge=scripted_judge())
    m = means(result)
    assert m["context_recall"] == 0.80
    assert m["faithfulness"] == 0.60
    assert m["faithfulness(unsupported='pass')"] == 0.80  # DeepEval's default rule, as the seed works it
    assert m["factual_correctness"] == m["factual_correctness(mode='precision')"] == 0.60
    assert m["factual_correctness(mode='recall')"] == 0.60
    assert m["answer_relevancy"] == 1.00
    assert m["context_relevance"] == 0.50
    assert m["judged_context_precision"] == 0.5 and m["judged_context_precision(form='average_precision')"] == 0.333
    assert m["hallucination"] == 0.4 and m["self_knowledge"] == 0.0 and m["context_utilization"] == 0.75
    assert m["noise_sensitivity"] == 0.0 and m["false_refusal"] == 0.0
    assert m["negative_rejection"] is None
    assert result["negative_rejection"][0].reason == "the question is answerable"


def test_at_most_five_calls_and_none_on_rescoring(q1, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    first = ragmeter.evaluate(q1, FIVE_CALL_SET, judge=scripted_judge(ledger))
    assert first.judge_stats["calls"] <= 5 and first.calls_per_sample <= 5
    again = ragmeter.evaluate(q1, FIVE_CALL_SET, judge=Judge(NoCallBackend("scripted", "scripted"), ledger=ledger))
    assert again.judge_stats["calls"] == 0  # NoCallBackend raises if asked
    # a variant reads the same judgments
    backend = ScriptedBackend(seed_judge.scripted)
    variant = ragmeter.evaluate(q1, ["faithfulness(evidence='per_chunk', unsupported='pass')", "contradiction_rate"],
                                judge=Judge(backend, ledger=ledger))
    assert backend.calls == 0 and variant.means()["contradiction_rate"] == pytest.approx(1 / 5)


def test_provenance_names_judge_and_prompt_hashes(q1):
    result = ragmeter.evaluate(q1, ["faithfulness", "context_relevance"], judge=scripted_judge())
    prov = result["faithfulness"][0].provenance
    assert prov.judge["model"] == "scripted" and set(prov.judge["prompts"]) == {"claims.extract", "claims.verify"}
    assert set(result["context_relevance"][0].provenance.judge["prompts"]) == {"context.relevance"}


def test_without_a_judge_judged_metrics_are_not_computed(q1):
    result = ragmeter.evaluate(q1, ["faithfulness", "ndcg@5"])
    assert result["faithfulness"][0].status == "not_computed" and "needs a judge" in result["faithfulness"][0].reason
    assert result.means()["ndcg@5"] is not None
    reason = result["faithfulness"][0].reason  # advice for a Python caller as well as the command line
    assert "judge='local' in Python" in reason and "--judge local on the command line" in reason
    assert "'openai:<model>'" in reason and "'anthropic:<model>'" in reason and "\n" not in reason


# Known answers that show where the variants differ.

def _sample(answer="A.", context=("c1", "c2"), answerable=True, reference=None, reference_claims=None):
    texts = {"c1": "The R2 has a 24-month warranty.", "c2": "It covers hardware faults."}
    return Sample(id="s", question="Q?", retrieved=tuple(Chunk(c, text=texts[c]) for c in context),
                  answer=answer, reference=reference, answerable=answerable, reference_claims=reference_claims)


def judge_with(claims, verdicts, declines=False):
    def respond(prompt_id, inputs, messages):
        if prompt_id == "claims.extract":
            return {"claims": [{"id": i, "text": t, "addresses_question": True, "cites": []}
                               for i, t in enumerate(claims, 1)],
                    "declines": declines, "reference_claims": []}
        return {"verdicts": [{"id": i, "verdict": v, "sources": s, "combined": comb, "quote": ""}
                             for i, (v, s, comb) in enumerate(verdicts, 1)]}
    backend = ScriptedBackend(respond)
    return Judge(backend), backend


def test_claim_needing_two_chunks_fails_only_per_chunk():
    judge, _ = judge_with(["The R2's 24-month warranty covers hardware faults."],
                          [("supported", ["c1", "c2"], True)])
    r = ragmeter.evaluate([_sample()], ["faithfulness", "faithfulness(evidence='per_chunk')"], judge=judge)
    assert r.means() == {"faithfulness": 1.0, "faithfulness(evidence='per_chunk')": 0.0}


def test_unsupported_claim_fails_only_under_fail():
    judge, _ = judge_with(["Shipping is free."], [("not_found", [], False)])
    r = ragmeter.evaluate([_sample()], ["faithfulness", "faithfulness(unsupported='pass')"], judge=judge)
    assert r.means() == {"faithfulness": 0.0, "faithfulness(unsupported='pass')": 1.0}


def test_refusal_is_not_scored_as_faithful_or_unfaithful():
    judge, _ = judge_with([], [], declines=True)
    r = ragmeter.evaluate([_sample(answer="I don't know.", answerable=False)],
                          ["faithfulness", "negative_rejection", "false_refusal", "context_recall"], judge=judge)
    assert r["faithfulness"][0].reason == "the answer has no claims"
    assert r.values("negative_rejection") == [1.0]
    assert r["false_refusal"][0].status == "not_computed"
    assert "unanswerable" in r["context_recall"][0].reason


def test_empty_context_makes_no_verification_call():
    judge, backend = judge_with(["The R2 has a 24-month warranty."], [])
    r = ragmeter.evaluate([dataclasses.replace(_sample(), retrieved=())], ["faithfulness"], judge=judge)
    assert r["faithfulness"][0].reason == "the context is empty" and backend.calls == 1  # extraction only


def test_judge_output_failure_is_failed_with_the_reason_not_a_number():
    def respond(prompt_id, inputs, messages):
        if prompt_id == "claims.extract":
            return {"claims": [{"id": 1, "text": "x", "addresses_question": True, "cites": []}], "declines": False,
                    "reference_claims": []}
        return "I think it's fine"
    judge = Judge(ScriptedBackend(respond), max_reasks=1)
    r = ragmeter.evaluate([_sample()], ["faithfulness", "answer_relevancy"], judge=judge)
    assert r["faithfulness"][0].status == "failed" and "JudgeOutputError" in r["faithfulness"][0].error
    assert r.summary("faithfulness").failed == 1 and r.means()["faithfulness"] is None
    assert r.means()["answer_relevancy"] == 1.0  # what did not fail is still scored


def test_missing_chunk_text_is_refused_before_any_call():
    judge = Judge(NoCallBackend())
    sample = Sample(id="s", question="Q?", retrieved=(Chunk("c1"),), answer="A.")
    with pytest.raises(ragmeter.InvalidInputError, match='chunk "c1" has no text'):
        ragmeter.evaluate([sample], ["faithfulness"], judge=judge)


def test_questions_form_of_answer_relevancy_uses_the_embedder(q1):
    def embed(texts):  # a toy embedder: bag of two words
        return [[t.lower().count("warranty") + 1e-9, t.lower().count("replacement")] for t in texts]
    r = ragmeter.evaluate(q1, ["answer_relevancy(form='questions')"], judge=scripted_judge(), embedder=embed)
    assert 0.0 < r.values("answer_relevancy(form='questions')")[0] <= 1.0
    default = ragmeter.evaluate(q1, ["answer_relevancy(form='questions')"], judge=scripted_judge())
    o = default["answer_relevancy(form='questions')"][0]  # the bundled MiniLM, named in the provenance
    assert 0.3 < o.value <= 1.0 and o.provenance.judge["embedder"]["model"].startswith("all-MiniLM-L6-v2")
    with pytest.MonkeyPatch.context() as mp:  # no embedding runtime: not computed, with the reason
        mp.setattr("ragmeter.embeddings.minilm.MiniLM._runtime", property(lambda self: (_ for _ in ()).throw(
            ragmeter.embeddings.EmbedderUnavailable("the bundled embedding model needs onnxruntime"))))
        nc = ragmeter.evaluate(q1, ["answer_relevancy(form='questions')"], judge=scripted_judge())
    assert "embedding model" in nc["answer_relevancy(form='questions')"][0].reason


def test_where_the_judge_weighs_support_faithfulness_is_its_word_weighted_mean():
    """sum_c n_c support_c / sum_c n_c, n_c the claim's content tokens (stop words out, at least 1)."""
    from ragmeter.evidence.matrix import Claim, Evidence, Verdict
    from ragmeter.metrics import JudgedContext, make_measure
    from ragmeter.metrics.generation.faithfulness import claim_weight, contradiction_rate, faithfulness

    claims = (Claim(1, "The R2 carries a 24-month warranty."), Claim(2, "It is."), Claim(3, "Shipping costs $5."))
    assert [claim_weight(c.text) for c in claims] == [4, 1, 3]  # r2 carries 24month warranty / - / shipping costs 5
    ev = Evidence(answer_claims=claims)
    ev.verdicts["answer@context"] = (Verdict(1, "supported", ("a",), False, "", 1.0),
                                     Verdict(2, "not_found", (), False, "", 0.5),
                                     Verdict(3, "contradicted", ("a",), True, "", 0.0))
    s, ctx = Sample("s"), JudgedContext()
    assert faithfulness(ev, s, make_measure("faithfulness"), ctx) == pytest.approx((4 * 1.0 + 1 * 0.5) / 8)
    assert faithfulness(ev, s, make_measure("faithfulness", unsupported="pass"), ctx) == pytest.approx(2 / 3)
    assert contradiction_rate(ev, s, make_measure("contradiction_rate"), ctx) == pytest.approx(1 / 3)
    combined = dataclasses.replace(ev, verdicts={"answer@context": (
        Verdict(1, "supported", ("a", "b"), True, "", 1.0), *ev.verdicts["answer@context"][1:])})
    assert faithfulness(combined, s, make_measure("faithfulness", evidence="per_chunk"), ctx) == pytest.approx(0.5 / 8)
    # one verdict without support: the count of supported claims, as for every other judge
    partial = dataclasses.replace(ev, verdicts={"answer@context": (
        Verdict(1, "supported", ("a",), False, ""), *ev.verdicts["answer@context"][1:])})
    assert faithfulness(partial, s, make_measure("faithfulness"), ctx) == pytest.approx(1 / 3)
