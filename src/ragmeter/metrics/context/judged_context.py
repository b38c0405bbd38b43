"""Context metrics judged against the reference answer and the question.

- context_recall = reference claims the context supports / reference claims (Ragas 0.4
  LLMContextRecall, DeepEval ContextualRecall). NotComputed on unanswerable questions.
- judged_context_precision: a context chunk is relevant when it supports at least one
  reference claim (same verdicts, no extra call). ``form='rank_weighted'``:
  sum(P@i * rel_i) / relevant found (Ragas/DeepEval context precision). ``form=
  'average_precision'``: the same sum / (relevant found + reference claims the context does
  not support), since each unsupported claim needs at least one chunk that is missing.
- response_context_precision: the same rank-weighted sum with a chunk relevant when it supports
  at least one claim of the generated answer (answer-vs-context verdicts, no extra call): no
  reference is needed, so it scores live traffic (Ragas 0.4 LLMContextPrecisionWithoutReference,
  which asks the judge whether each chunk was useful in arriving at the answer).
- context_relevance = context sentences needed to answer / all context sentences (Es et al.
  2023, the Ragas paper), one extra call.

The article's q1 ("RAG Evaluation Metrics: Formulas and a Worked Example", examples/warranty/): 4
of 5 reference claims supported: recall 0.80; relevant chunks at ranks 2 and 4:
rank-weighted (1/2 + 2/4) / 2 = 0.5, average precision (1/2 + 2/4) / (2 + 1); the answer's
supported claims rest on warranty-r2 and claim-steps, the same ranks 2 and 4: response-based
(1/2 + 2/4) / 2 = 0.5; three of the six context sentences are needed: relevance 3/6.

>>> round((1/2 + 2/4) / (2 + 1), 3), 3 / 6
(0.333, 0.5)
"""

from __future__ import annotations

import numpy as np

from ragmeter.core.measure import Display, Measure, Param
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import Evidence, Verdict
from ragmeter.metrics.claim_reading import by_claim, require, require_claims, supported
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec, Unscorable
from ragmeter.metrics.retrieval import kernels
from ragmeter.metrics.spec_table import register


def context_recall(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    if not sample.answerable:
        raise Unscorable("the question is marked unanswerable: there is nothing to recall")
    claims = require_claims(ev.reference_claims, "reference answer")
    verdicts = by_claim(require(ev.verdicts.get("reference@context"), "no verdicts"))
    return sum(supported(verdicts, c.id) for c in claims) / len(claims)


def _precision_sum(verdicts: tuple[Verdict, ...], ranked: tuple[str, ...]) -> tuple[int, float]:
    """(chunks relevant, sum of P@i at their ranks in ``ranked``): a chunk is relevant when it is
    among the passages behind a supported claim."""
    relevant = {src for v in verdicts if v.verdict == "supported" for src in v.sources}
    rel = np.array([[cid in relevant for cid in ranked]], dtype=bool).reshape(1, -1)
    return int(kernels.found(rel)[0]), float(kernels.precision_sum(rel)[0])


def judged_context_precision(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    claims = require_claims(ev.reference_claims, "reference answer")
    verdicts = require(ev.verdicts.get("reference@context"), "no verdicts")
    found, precision_sum = _precision_sum(verdicts, sample.context_ids)
    if measure.params["form"] == "rank_weighted":
        return precision_sum / found if found else 0.0
    unsupported = sum(not supported(by_claim(verdicts), c.id) for c in claims)
    return precision_sum / (found + unsupported) if found + unsupported else 0.0


def response_context_precision(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    require_claims(ev.answer_claims, "answer")
    # ranked as the answer's context reached its prompt (every retrieval's chunks, where there were several)
    found, precision_sum = _precision_sum(require(ev.verdicts.get("answer@context"), "no verdicts"),
                                          sample.answer_context_ids)
    return precision_sum / found if found else 0.0


def context_relevance(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    needed = require(ev.needed_sentences, "no sentence judgment")
    if not ev.sentences:
        raise Unscorable("the context is empty")
    return len(needed) / len(ev.sentences)


register(JudgedSpec(
    name="context_recall", version=1, family="context",
    evidence=frozenset({"reference_claims", "reference@context"}), display=Display("ctx recall", "context recall"),
    definition="reference claims supported by the context / reference claims",
    source="Ragas 0.4 LLMContextRecall; DeepEval 4.2.8 ContextualRecall", aliases=("claim_recall",),
    undefined="no reference claims, or an unanswerable question", compute=context_recall))

register(JudgedSpec(
    name="judged_context_precision", version=1, family="context", rank_aware=True,
    evidence=frozenset({"reference_claims", "reference@context"}),
    display=Display("judged ctx precision", "judged context precision"),
    definition="rank_weighted: sum(P@i rel_i) / relevant found; "
               "average_precision: / (found + unsupported reference claims)",
    source="Ragas 0.4 LLMContextPrecisionWithReference, DeepEval ContextualPrecision (rank_weighted)",
    params={"form": Param(str, "rank_weighted", choices=("rank_weighted", "average_precision"))},
    undefined="no reference claims", compute=judged_context_precision))

register(JudgedSpec(
    name="response_context_precision", version=1, family="context", rank_aware=True,
    evidence=frozenset({"answer_claims", "answer@context"}),
    display=Display("resp ctx precision", "response context precision"),
    definition="sum(P@i rel_i) / relevant found, a chunk relevant when it supports a claim of the answer",
    source="Ragas 0.4 LLMContextPrecisionWithoutReference (judged against the response, no reference)",
    aliases=("context_precision_without_reference",),
    undefined="the answer has no claims", compute=response_context_precision))

register(JudgedSpec(
    name="context_relevance", version=1, family="context",
    evidence=frozenset({"context_sentences"}), display=Display("ctx relevance", "context relevance"),
    definition="context sentences needed to answer / context sentences",
    source="Es et al. 2023, RAGAS: Automated Evaluation of RAG (context relevance)",
    undefined="the context is empty", compute=context_relevance))
