"""RAGChecker's diagnostic metrics (Ru et al. 2024), from the shared claim matrix.

An answer claim is *correct* when the reference supports it; a chunk is *relevant* when it
supports at least one reference claim. Over all answer claims:

- hallucination = incorrect claims no context chunk supports / answer claims;
- self_knowledge = correct claims no context chunk supports / answer claims;
- noise_sensitivity(chunks='relevant') = incorrect claims a relevant chunk supports / answer
  claims; ``'irrelevant'``: incorrect claims that only irrelevant chunks support / answer claims
  (the two are exclusive, as in RAGChecker's ``computation.py``; version 2: version 1 also
  counted, under ``'irrelevant'``, a claim that a relevant chunk supports too).

context_utilization = reference claims the context supports that the answer also states /
reference claims the context supports.

The article's q1 ("RAG Evaluation Metrics: Formulas and a Worked Example", examples/warranty/):
claims 4 and 5 are incorrect; 4 is supported by no chunk (contradicted), 5 by
none: hallucination 2/5; every correct claim is in the context: self-knowledge 0/5.

>>> 2 / 5
0.4
"""

from __future__ import annotations

from ragmeter.core.measure import Display, Measure, Param
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import Claim, Evidence, Verdict
from ragmeter.metrics.claim_reading import by_claim, require, require_claims, supported
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec, Unscorable
from ragmeter.metrics.spec_table import register

ANSWER_SIDE = frozenset({"answer_claims", "reference_claims", "answer@context", "answer@reference",
                         "reference@context"})


def _sides(ev: Evidence) -> tuple[tuple[Claim, ...], dict[int, Verdict], dict[int, Verdict]]:
    claims = require_claims(ev.answer_claims, "answer")
    correct = by_claim(require(ev.verdicts.get("answer@reference"), "no verdicts"))
    in_context = by_claim(require(ev.verdicts.get("answer@context"), "no verdicts"))
    return claims, correct, in_context


def relevant_chunks(ev: Evidence) -> set[str]:
    verdicts = require(ev.verdicts.get("reference@context"), "no verdicts")
    return {src for v in verdicts if v.verdict == "supported" for src in v.sources}


def hallucination(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    claims, correct, ctx = _sides(ev)
    return sum(not supported(correct, c.id) and not supported(ctx, c.id) for c in claims) / len(claims)


def self_knowledge(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    claims, correct, ctx = _sides(ev)
    return sum(supported(correct, c.id) and not supported(ctx, c.id) for c in claims) / len(claims)


def noise_sensitivity(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    claims, correct, ctx = _sides(ev)
    relevant = relevant_chunks(ev)
    want_relevant = measure.params["chunks"] == "relevant"

    def counts(claim_id: int) -> bool:
        v = ctx.get(claim_id)
        if supported(correct, claim_id) or v is None or v.verdict != "supported":
            return False
        by_relevant = any(src in relevant for src in v.sources)
        return by_relevant if want_relevant else not by_relevant and any(src not in relevant for src in v.sources)

    return sum(counts(c.id) for c in claims) / len(claims)


def context_utilization(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    ref = require_claims(ev.reference_claims, "reference answer")
    in_context = by_claim(require(ev.verdicts.get("reference@context"), "no verdicts"))
    in_answer = by_claim(require(ev.verdicts.get("reference@answer"), "no verdicts"))
    available = [c for c in ref if supported(in_context, c.id)]
    if not available:
        raise Unscorable("the context supports no reference claim")
    return sum(supported(in_answer, c.id) for c in available) / len(available)


RAGCHECKER = "Ru et al. 2024, RAGChecker (NeurIPS Datasets and Benchmarks)"

register(JudgedSpec(name="hallucination", version=1, family="generation", source=RAGCHECKER, evidence=ANSWER_SIDE,
                    higher_is_better=False, display=Display("halluc.", "hallucination"),
                    definition="incorrect answer claims no context chunk supports / answer claims",
                    undefined="the answer has no claims", compute=hallucination))
register(JudgedSpec(name="self_knowledge", version=1, family="generation", source=RAGCHECKER, evidence=ANSWER_SIDE,
                    display=Display("self-know.", "self-knowledge"),
                    definition="correct answer claims no context chunk supports / answer claims",
                    undefined="the answer has no claims", compute=self_knowledge))
register(JudgedSpec(name="noise_sensitivity", version=2, family="generation", source=RAGCHECKER, evidence=ANSWER_SIDE,
                    higher_is_better=False, display=Display("noise sens.", "noise sensitivity"),
                    definition="incorrect answer claims that a relevant chunk supports (or that only irrelevant "
                               "chunks support) / answer claims",
                    params={"chunks": Param(str, "relevant", choices=("relevant", "irrelevant"))},
                    undefined="the answer has no claims", compute=noise_sensitivity))
register(JudgedSpec(name="context_utilization", version=1, family="generation", source=RAGCHECKER,
                    evidence=frozenset({"reference_claims", "reference@context", "reference@answer"}),
                    display=Display("utilization", "context utilization"),
                    definition="reference claims in the context that the answer states "
                               "/ reference claims in the context",
                    undefined="the context supports no reference claim", compute=context_utilization))
