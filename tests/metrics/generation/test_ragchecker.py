"""RAGChecker's noise sensitivity: relevant and irrelevant are exclusive, as in RAGChecker's
computation.py (``irrelevant_faithful &= ~relevant_faithful``)."""

from __future__ import annotations

from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import Claim, Evidence, Verdict
from ragmeter.metrics import JudgedContext, make_measure
from ragmeter.metrics.generation.ragchecker import noise_sensitivity


def _evidence() -> Evidence:
    """Claim 1 is incorrect and supported by chunk r (relevant) and chunk n (irrelevant); claim 2
    is incorrect and supported by n alone; claim 3 is correct."""
    ev = Evidence(answer_claims=(Claim(1, "a"), Claim(2, "b"), Claim(3, "c")), reference_claims=(Claim(1, "x"),))
    def v(claim: int, verdict: str, *sources: str) -> Verdict:
        return Verdict(claim, verdict, sources, False, "")

    ev.verdicts["answer@reference"] = (v(1, "not_found"), v(2, "contradicted"), v(3, "supported"))
    ev.verdicts["answer@context"] = (v(1, "supported", "r", "n"), v(2, "supported", "n"), v(3, "supported", "r"))
    ev.verdicts["reference@context"] = (v(1, "supported", "r"),)
    return ev


def test_a_claim_a_relevant_chunk_supports_counts_as_relevant_noise_only():
    ev, sample = _evidence(), Sample("q", answer="a b c", reference="x")
    relevant = noise_sensitivity(ev, sample, make_measure("noise_sensitivity"), JudgedContext())
    irrelevant = noise_sensitivity(ev, sample, make_measure("noise_sensitivity", chunks="irrelevant"), JudgedContext())
    assert relevant == 1 / 3  # claim 1
    assert irrelevant == 1 / 3  # claim 2 only: claim 1 was counted here too (2/3) before
    assert make_measure("noise_sensitivity").spec.version == 2
