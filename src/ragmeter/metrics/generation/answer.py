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

The article's q1 ("RAG Evaluation Metrics: Formulas and a Worked Example", examples/warranty/):
statements 5/5 = 1.00; factual precision 3/5, recall 3/5, F1 0.60.

>>> 2 * (3/5) * (3/5) / (3/5 + 3/5)
0.6
"""

from __future__ import annotations

from dataclasses import dataclass

from ragmeter.core.measure import Display, Measure, Param
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import ANSWER_CLAIMS, QUESTIONS, Claim, Evidence, Unavailable, Verdict, with_argument
from ragmeter.metrics.claim_reading import by_claim, require, require_claims, supported
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec, Unscorable
from ragmeter.metrics.spec_table import register


def answer_relevancy(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    if measure.params["form"] == "statements":
        claims = require_claims(ev.answer_claims, "answer")
        if any(c.addresses_question is None for c in claims):
            raise Unscorable("the answer's statements were not marked for relevance")
        return sum(bool(c.addresses_question) for c in claims) / len(claims)
    questions = require(ev.questions, "no generated questions")
    if ev.noncommittal:
        return 0.0
    embedder = context.embedder
    if embedder is None or isinstance(embedder, str):
        raise Unscorable(embedder or "the questions form needs an embedding model (pass embedder=...)")
    if not questions or not sample.question:
        raise Unscorable("no question to compare with")
    vectors = embedder.encode([sample.question, *questions])  # unit rows: a dot product is the cosine
    return float((vectors[1:] @ vectors[0]).mean())


def _share_supported(claims: tuple[Claim, ...] | Unavailable | None, what: str,
                     verdicts: tuple[Verdict, ...] | Unavailable | None) -> float:
    listed = require_claims(claims, what)
    found = by_claim(require(verdicts, "no verdicts"))
    return sum(supported(found, c.id) for c in listed) / len(listed)


def factual_correctness(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    mode = measure.params["mode"]
    if mode == "recall":
        return _share_supported(ev.reference_claims, "reference answer", ev.verdicts.get("reference@answer"))
    precision = _share_supported(ev.answer_claims, "answer", ev.verdicts.get("answer@reference"))
    if mode == "precision":
        return precision
    recall = _share_supported(ev.reference_claims, "reference answer", ev.verdicts.get("reference@answer"))
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def negative_rejection(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    if sample.answerable:
        raise Unscorable("the question is answerable")
    return float(bool(require(ev.declines, "no refusal mark")))


def false_refusal(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    if not sample.answerable:
        raise Unscorable("the question is marked unanswerable")
    return float(bool(require(ev.declines, "no refusal mark")))


@dataclass(frozen=True, kw_only=True)
class AnswerRelevancySpec(JudgedSpec):
    """The statements form reads the extraction call; the questions form generates ``n``
    questions and embeds them."""

    def needs(self, measure: Measure) -> frozenset[str]:
        if measure.params["form"] == "statements":
            return frozenset({ANSWER_CLAIMS})
        return frozenset({with_argument(QUESTIONS, measure.params["n"])})

    def needs_embedder(self, measure: Measure) -> bool:
        return bool(measure.params["form"] == "questions")


register(AnswerRelevancySpec(
    name="answer_relevancy", version=1, family="generation",
    evidence=frozenset({ANSWER_CLAIMS}), display=Display("answer relevancy", "answer relevancy"),
    definition="statements: statements addressing the question / statements; questions: mean cos(question, generated)",
    source="DeepEval 4.2.8 AnswerRelevancyMetric (statements); Ragas 0.4 ResponseRelevancy (questions)",
    aliases=("response_relevancy",),
    params={"form": Param(str, "statements", choices=("statements", "questions")),
            "n": Param(int, 3, ge=1, doc="questions generated (questions form)")},
    undefined="the answer has no claims", compute=answer_relevancy))

register(JudgedSpec(
    name="factual_correctness", version=1, family="generation",
    evidence=frozenset({"answer_claims", "reference_claims", "answer@reference", "reference@answer"}),
    display=Display("factual", "factual correctness"),
    definition="claim-level F1 (or precision, recall) of the answer against the reference answer",
    source="Ragas 0.4 FactualCorrectness",
    params={"mode": Param(str, "f1", choices=("f1", "precision", "recall"))},
    undefined="the answer or the reference has no claims", compute=factual_correctness))

register(JudgedSpec(
    name="negative_rejection", version=1, family="generation", binary=True,
    evidence=frozenset({"answer_claims"}), display=Display("rejects", "rejection rate"),
    definition="on unanswerable questions: 1 if the answer declines, else 0",
    source="Chen et al. 2023, Benchmarking LLMs in RAG (RGB), negative rejection",
    undefined="the question is answerable", compute=negative_rejection))

register(JudgedSpec(
    name="false_refusal", version=1, family="generation", binary=True,
    higher_is_better=False, evidence=frozenset({"answer_claims"}), display=Display("refuses", "false refusal rate"),
    definition="on answerable questions: 1 if the answer declines anyway, else 0",
    source="ragmeter (the complement view of RGB negative rejection)",
    undefined="the question is marked unanswerable", compute=false_refusal))
