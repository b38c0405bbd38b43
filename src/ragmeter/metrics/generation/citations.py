"""Citation recall and precision (ALCE, Gao et al. 2023), read from the shared claim matrix, and
attribution accuracy.

Each answer claim carries the citation markers of its sentence (``[1]`` = the first chunk
of the context, ``[doc-id]`` = that chunk; or, with hand-written ``answer_claims``, a
``citations`` list per claim in the sample's metadata). A citation *supports* its claim
when the claim's verdict against the context is supported and the cited chunk is among
the passages behind that verdict. No extra judge call: the verification call already says
which passages support each claim.

- citation_recall = claims with at least one supporting citation / claims;
- citation_precision = citations that support their claim / citations;
- attribution_accuracy = claims whose cited passages, read alone, say what the claim says /
  claims that cite (one more ``claims.verify`` call per set of passages cited:
  :mod:`ragmeter.evidence.cited_passages`). It answers "does the cited passage actually say
  what the response claims it says?": a claim the context supports through two passages
  together, of which it cites one, has a supporting citation (recall, precision), but the
  passage it cites does not say it alone: not an accurate attribution.

>>> resolve("2", ("a", "b", "c")), resolve("[c]", ("a", "b", "c")), resolve("9", ("a",))
('b', 'c', None)
"""

from __future__ import annotations

from ragmeter.core.measure import Display, Measure
from ragmeter.core.sample import Sample
from ragmeter.evidence.citation_markers import resolve
from ragmeter.evidence.matrix import CITED, Evidence
from ragmeter.metrics.claim_reading import by_claim, require, require_claims
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec, Unscorable
from ragmeter.metrics.spec_table import register

NEEDS = frozenset({"answer_claims", "answer@context"})


def _matches(ev: Evidence, sample: Sample) -> list[list[tuple[str, bool]]]:
    claims = require_claims(ev.answer_claims, "answer")
    if not any(c.cites for c in claims):
        raise Unscorable("the answer cites nothing")
    verdicts = by_claim(require(ev.verdicts.get("answer@context"), "no verdicts"))
    ctx = sample.answer_context_ids  # the answer's markers number what it was written from
    out: list[list[tuple[str, bool]]] = []
    for c in claims:
        v = verdicts.get(c.id)
        backing = set(v.sources) if v is not None and v.verdict == "supported" else set()
        out.append([(marker, resolve(marker, ctx) in backing) for marker in c.cites])
    return out


def citation_recall(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    matches = _matches(ev, sample)
    return sum(any(ok for _, ok in m) for m in matches) / len(matches)


def citation_precision(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    pairs = [ok for m in _matches(ev, sample) for _, ok in m]
    return sum(pairs) / len(pairs)


def attribution_accuracy(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    citing = [c for c in require_claims(ev.answer_claims, "answer") if c.cites]
    if not citing:
        raise Unscorable("the answer cites nothing")
    verdicts = by_claim(require(ev.verdicts.get(CITED), "no verdicts"))
    return sum(verdicts[c.id].verdict == "supported" for c in citing if c.id in verdicts) / len(citing)


ALCE = "Gao et al. 2023, Enabling LLMs to Generate Text with Citations (ALCE)"
register(JudgedSpec(name="citation_recall", version=1, family="generation", evidence=NEEDS, source=ALCE,
                    undefined="the answer cites nothing", display=Display("cite recall", "citation recall"),
                    definition="claims with at least one supporting citation / claims", compute=citation_recall))
register(JudgedSpec(name="citation_precision", version=1, family="generation", evidence=NEEDS, source=ALCE,
                    undefined="the answer cites nothing", display=Display("cite precision", "citation precision"),
                    definition="citations that support their claim / citations", compute=citation_precision))
register(JudgedSpec(name="attribution_accuracy", version=1, family="generation",
                    evidence=frozenset({"answer_claims", CITED}), undefined="the answer cites nothing",
                    display=Display("attribution", "attribution accuracy"),
                    definition="claims whose cited passages alone say what the claim says / claims that cite",
                    source="the citation-quality triple of the RAG metric reference (precision, recall, attribution "
                           "accuracy); " + ALCE + " (a claim checked against its cited passages)",
                    compute=attribution_accuracy))
