"""RAGChecker's diagnostic metrics (Ru et al. 2024), from the shared claim matrix.

An answer claim is *correct* when the reference supports it; a chunk is *relevant* when it
supports at least one reference claim. Over all answer claims:

- hallucination = incorrect claims no context chunk supports / answer claims;
- self_knowledge = correct claims no context chunk supports / answer claims;
- noise_sensitivity(chunks='relevant') = incorrect claims a relevant chunk supports / answer
  claims; ``'irrelevant'``: incorrect claims an irrelevant chunk supports / answer claims.

context_utilization = reference claims the context supports that the answer also states /
reference claims the context supports.

Seed q1: claims 4 and 5 are incorrect; 4 is supported by no chunk (contradicted), 5 by
none: hallucination 2/5; every correct claim is in the context: self-knowledge 0/5.

>>> 2 / 5
0.4
"""

from __future__ import annotations

from ragmeter.metrics.judged import by_claim, claims_or_stop, need, supported, undefined
from ragmeter.metrics.spec import Measure, MetricSpec, Param, register

ANSWER_SIDE = frozenset({"answer_claims", "reference_claims", "answer@context", "answer@reference",
                         "reference@context"})


def _sides(ev):
    claims = claims_or_stop(ev.answer_claims, "answer")
    correct = by_claim(need(ev.verdicts.get("answer@reference"), "no verdicts"))
    in_context = by_claim(need(ev.verdicts.get("answer@context"), "no verdicts"))
    return claims, correct, in_context


def relevant_chunks(ev) -> set[str]:
    verdicts = need(ev.verdicts.get("reference@context"), "no verdicts")
    return {src for v in verdicts if v.verdict == "supported" for src in v.sources}


def hallucination(ev, sample, measure: Measure, env=None) -> float:
    claims, correct, ctx = _sides(ev)
    return sum(not supported(correct, c.id) and not supported(ctx, c.id) for c in claims) / len(claims)


def self_knowledge(ev, sample, measure: Measure, env=None) -> float:
    claims, correct, ctx = _sides(ev)
    return sum(supported(correct, c.id) and not supported(ctx, c.id) for c in claims) / len(claims)


def noise_sensitivity(ev, sample, measure: Measure, env=None) -> float:
    claims, correct, ctx = _sides(ev)
    relevant = relevant_chunks(ev)
    want_relevant = measure.params["chunks"] == "relevant"

    def counts(claim_id: int) -> bool:
        v = ctx.get(claim_id)
        if supported(correct, claim_id) or v is None or v.verdict != "supported":
            return False
        return any((src in relevant) == want_relevant for src in v.sources)

    return sum(counts(c.id) for c in claims) / len(claims)


def context_utilization(ev, sample, measure: Measure, env=None) -> float:
    ref = claims_or_stop(ev.reference_claims, "reference answer")
    in_context = by_claim(need(ev.verdicts.get("reference@context"), "no verdicts"))
    in_answer = by_claim(need(ev.verdicts.get("reference@answer"), "no verdicts"))
    available = [c for c in ref if supported(in_context, c.id)]
    if not available:
        raise undefined("the context supports no reference claim")
    return sum(supported(in_answer, c.id) for c in available) / len(available)


_COMMON = dict(family="generation", version=1, accepts_k=False, rank_aware=False,
               source="Ru et al. 2024, RAGChecker (NeurIPS Datasets and Benchmarks)")

register(MetricSpec(name="hallucination", **_COMMON, needs=ANSWER_SIDE, higher_is_better=False,
                    label="halluc.", mean_label="hallucination",
                    definition="incorrect answer claims no context chunk supports / answer claims",
                    undefined="the answer has no claims", compute=hallucination))
register(MetricSpec(name="self_knowledge", **_COMMON, needs=ANSWER_SIDE, label="self-know.",
                    mean_label="self-knowledge",
                    definition="correct answer claims no context chunk supports / answer claims",
                    undefined="the answer has no claims", compute=self_knowledge))
register(MetricSpec(name="noise_sensitivity", **_COMMON, needs=ANSWER_SIDE, higher_is_better=False,
                    label="noise sens.", mean_label="noise sensitivity",
                    definition="incorrect answer claims that a relevant (or irrelevant) chunk supports / answer claims",
                    params={"chunks": Param(str, "relevant", choices=("relevant", "irrelevant"))},
                    undefined="the answer has no claims", compute=noise_sensitivity))
register(MetricSpec(name="context_utilization", **_COMMON,
                    needs=frozenset({"reference_claims", "reference@context", "reference@answer"}),
                    label="utilization", mean_label="context utilization",
                    definition="reference claims in the context that the answer states / reference claims in the context",
                    undefined="the context supports no reference claim", compute=context_utilization))
