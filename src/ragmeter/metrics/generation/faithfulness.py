"""Faithfulness: is each claim of the answer backed by the context that reached the prompt?

faithfulness = answer claims that pass / answer claims, read from the shared verdicts of
answer claims against the context (one judge call; variants cost no call):

- ``unsupported='fail'`` (default): a claim passes only when the context supports it
  (Ragas paper, Es et al. 2023, F = |V| / |S|; RAGChecker). ``'pass'``: only a
  contradiction fails (DeepEval 4.2.8's default rule, penalize_ambiguous_claims off).
- ``evidence='joined'`` (default): support may combine passages. ``'per_chunk'``: a claim
  needs one passage that supports it alone (RAGChecker).

Where the judge weighs each claim's support (the offline judge, ``--judge local``: every verdict
carries ``support`` in [0, 1], 0 for a contradicted claim, 1 for a decisively supported one, its
support probability in between; ``judges/offline/rule.py``), ``unsupported='fail'`` is the
expected share of the answer's content words that stand in supported claims,

    faithfulness = sum_c n_c * support_c / sum_c n_c,

n_c the claim's content tokens (K-Precision's, ``stop_words='drop'``; at least 1): the unit of
K-Precision (Adlakha et al. 2023) with the judge's claim-level evidence. Measured against people
on the MTRAG development half, it ranks answers better than the count of supported claims
(``docs/offline-judge.md``).

contradiction_rate = contradicted answer claims / answer claims.
An answer with no claims (a refusal) is NotComputed, never 0, 1 or NaN.

The article's q1 ("RAG Evaluation Metrics: Formulas and a Worked Example", examples/warranty/):
claims 1-3 supported, 4 ("2 business days") contradicted, 5 ("free shipping") not
found: 3/5 with ``'fail'``, 4/5 with ``'pass'``, contradiction rate 1/5.

>>> from ragmeter.evidence.matrix import Evidence, Claim, Verdict
>>> from ragmeter.core.sample import Sample
>>> from ragmeter.metrics import JudgedContext, make_measure
>>> ev = Evidence(answer_claims=tuple(Claim(i, f"c{i}") for i in range(1, 6)))
>>> ev.verdicts["answer@context"] = tuple(Verdict(i, v, (), False, "") for i, v in
...     enumerate(["supported", "supported", "supported", "contradicted", "not_found"], start=1))
>>> [faithfulness(ev, Sample("q1"), m, JudgedContext()) for m in (make_measure("faithfulness", unsupported=u)
...                                                                for u in ("fail", "pass"))]
[0.6, 0.8]
"""

from __future__ import annotations

from ragmeter.core.measure import Display, Measure, Param
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import Evidence, Verdict
from ragmeter.metrics.claim_reading import by_claim, require, require_claims
from ragmeter.metrics.generation.kprecision import STOP_WORDS, squad_tokens
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec
from ragmeter.metrics.spec_table import register

NEEDS = frozenset({"answer_claims", "answer@context"})


def faithfulness(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    claims = require_claims(ev.answer_claims, "answer")
    verdicts = by_claim(require(ev.verdicts.get("answer@context"), "no verdicts"))
    unsupported, per_chunk = measure.params["unsupported"], measure.params["evidence"] == "per_chunk"

    def passes(claim_id: int) -> bool:
        v = verdicts.get(claim_id)
        if v is None:
            return False
        if unsupported == "pass":
            return v.verdict != "contradicted"
        return v.verdict == "supported" and not (per_chunk and v.combined)

    credit = [support(verdicts.get(c.id), per_chunk) for c in claims]
    if unsupported == "fail" and all(s is not None for s in credit):
        n = [claim_weight(c.text) for c in claims]
        return sum(a * (b or 0.0) for a, b in zip(n, credit)) / sum(n)
    return sum(passes(c.id) for c in claims) / len(claims)


def support(v: Verdict | None, per_chunk: bool) -> float | None:
    """The credit the judge gives a claim (None where it gives none); 0 for combined support
    under ``evidence='per_chunk'``."""
    if v is None or v.support is None:
        return None
    return 0.0 if per_chunk and v.combined else float(v.support)


def claim_weight(text: str) -> int:
    """A claim's content tokens (SQuAD-normalised, stop words out), at least 1.

    >>> claim_weight("The R2 has a 24-month warranty."), claim_weight("It is.")
    (3, 1)
    """
    return max(1, sum(w not in STOP_WORDS for w in squad_tokens(text)))


def contradiction_rate(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    claims = require_claims(ev.answer_claims, "answer")
    verdicts = by_claim(require(ev.verdicts.get("answer@context"), "no verdicts"))
    contradicted = sum(verdicts.get(c.id) is not None and verdicts[c.id].verdict == "contradicted" for c in claims)
    return contradicted / len(claims)


register(JudgedSpec(
    name="faithfulness", version=1, family="generation", evidence=NEEDS,
    display=Display("faithfulness", "faithfulness"),
    definition="answer claims supported by the context / answer claims; where the judge weighs each claim's support "
               "(the offline judge): sum of content words x support / sum of content words",
    source="Es et al. 2023 (Ragas paper); RAGChecker (per_chunk); DeepEval 4.2.8 (unsupported='pass')",
    aliases=("groundedness",),
    params={"unsupported": Param(str, "fail", choices=("fail", "pass"),
                                 doc="does a claim the context does not mention fail?"),
            "evidence": Param(str, "joined", choices=("joined", "per_chunk"), doc="may support combine passages?")},
    undefined="the answer has no claims", compute=faithfulness))

register(JudgedSpec(
    name="contradiction_rate", version=1, family="generation", evidence=NEEDS,
    higher_is_better=False, display=Display("contradicted", "contradiction rate"),
    definition="answer claims the context contradicts / answer claims",
    source="ragmeter (from the faithfulness verdicts)",
    undefined="the answer has no claims", compute=contradiction_rate))
