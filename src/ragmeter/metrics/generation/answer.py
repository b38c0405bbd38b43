"""Answer-level metrics: answer relevancy (both published forms), factual correctness, and
refusal behaviour (negative rejection, false refusals).

- answer_relevancy(form='statements'): answer statements that address the question /
  answer statements (DeepEval AnswerRelevancyMetric), from the extraction call.
- answer_relevancy(form='questions'): mean cosine between the question and ``n`` questions
  generated from the answer, 0 when the answer is noncommittal (Ragas ResponseRelevancy);
  embeds with the bundled MiniLM unless ``evaluate(..., embedder=...)`` names another.
- factual_correctness: precision = answer claims the reference supports / answer claims;
  recall = reference claims the answer supports / reference claims; F1 their harmonic mean
  (Ragas FactualCorrectness, claim-level; ``mode`` picks which one is reported).
- negative_rejection: on questions marked ``answerable: false``, 1 when the answer declines
  (RGB, Chen et al. 2023: the rejection rate is the mean); NotComputed on answerable ones.
- false_refusal: on answerable questions, 1 when the answer declines anyway.

Seed q1: statements 5/5 = 1.00; factual precision 3/5, recall 3/5, F1 0.60.

>>> 2 * (3/5) * (3/5) / (3/5 + 3/5)
0.6
"""

from __future__ import annotations

from ragmeter.metrics.judged import by_claim, claims_or_stop, need, supported, undefined
from ragmeter.metrics.spec import Measure, MetricSpec, Param, register


def answer_relevancy(ev, sample, measure: Measure, env=None) -> float:
    if measure.params["form"] == "statements":
        claims = claims_or_stop(ev.answer_claims, "answer")
        if any(c.addresses_question is None for c in claims):
            raise undefined("the answer's statements were not marked for relevance")
        return sum(bool(c.addresses_question) for c in claims) / len(claims)
    questions = need(ev.questions, "no generated questions")
    if ev.noncommittal:
        return 0.0
    embedder = getattr(env, "embedder", None)
    if embedder is None or isinstance(embedder, str):
        raise undefined(embedder or "the questions form needs an embedding model (pass embedder=...)")
    if not questions or not sample.question:
        raise undefined("no question to compare with")
    vectors = embedder.encode([sample.question, *questions])  # unit rows: a dot product is the cosine
    return float((vectors[1:] @ vectors[0]).mean())


def factual_correctness(ev, sample, measure: Measure, env=None) -> float:
    mode = measure.params["mode"]
    precision = recall = None
    if mode in ("precision", "f1"):
        claims = claims_or_stop(ev.answer_claims, "answer")
        verdicts = by_claim(need(ev.verdicts.get("answer@reference"), "no verdicts"))
        precision = sum(supported(verdicts, c.id) for c in claims) / len(claims)
    if mode in ("recall", "f1"):
        claims = claims_or_stop(ev.reference_claims, "reference answer")
        verdicts = by_claim(need(ev.verdicts.get("reference@answer"), "no verdicts"))
        recall = sum(supported(verdicts, c.id) for c in claims) / len(claims)
    if mode == "precision":
        return precision
    if mode == "recall":
        return recall
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def negative_rejection(ev, sample, measure: Measure, env=None) -> float:
    if sample.answerable:
        raise undefined("the question is answerable")
    return float(bool(need(ev.declines, "no refusal mark")))


def false_refusal(ev, sample, measure: Measure, env=None) -> float:
    if not sample.answerable:
        raise undefined("the question is marked unanswerable")
    return float(bool(need(ev.declines, "no refusal mark")))


def _relevancy_needs(measure: Measure) -> frozenset:
    return frozenset({"answer_claims"}) if measure.params["form"] == "statements" else frozenset({"answer_questions"})


register(MetricSpec(
    name="answer_relevancy", version=1, family="generation", accepts_k=False, rank_aware=False,
    needs=frozenset({"answer_claims"}), label="answer relevancy", mean_label="answer relevancy",
    definition="statements: statements addressing the question / statements; questions: mean cos(question, generated)",
    source="DeepEval 4.2.8 AnswerRelevancyMetric (statements); Ragas 0.4 ResponseRelevancy (questions)",
    aliases=("response_relevancy",),
    params={"form": Param(str, "statements", choices=("statements", "questions")),
            "n": Param(int, 3, ge=1, doc="questions generated (questions form)")},
    needs_fn=_relevancy_needs, undefined="the answer has no claims", compute=answer_relevancy))

register(MetricSpec(
    name="factual_correctness", version=1, family="generation", accepts_k=False, rank_aware=False,
    needs=frozenset({"answer_claims", "reference_claims", "answer@reference", "reference@answer"}),
    label="factual", mean_label="factual correctness",
    definition="claim-level F1 (or precision, recall) of the answer against the reference answer",
    source="Ragas 0.4 FactualCorrectness",
    params={"mode": Param(str, "f1", choices=("f1", "precision", "recall"))},
    undefined="the answer or the reference has no claims", compute=factual_correctness))

register(MetricSpec(
    name="negative_rejection", version=1, family="generation", accepts_k=False, rank_aware=False, binary=True,
    needs=frozenset({"answer_claims"}), label="rejects", mean_label="rejection rate",
    definition="on unanswerable questions: 1 if the answer declines, else 0",
    source="Chen et al. 2023, Benchmarking LLMs in RAG (RGB), negative rejection",
    undefined="the question is answerable", compute=negative_rejection))

register(MetricSpec(
    name="false_refusal", version=1, family="generation", accepts_k=False, rank_aware=False, binary=True,
    higher_is_better=False, needs=frozenset({"answer_claims"}), label="refuses", mean_label="false refusal rate",
    definition="on answerable questions: 1 if the answer declines anyway, else 0",
    source="ragmeter (the complement view of RGB negative rejection)",
    undefined="the question is marked unanswerable", compute=false_refusal))
