"""``ragmeter.metrics.generation.citations``: Citation recall and precision (ALCE, Gao et al. 2023),
read from the shared claim matrix."""

from __future__ import annotations

import pytest

import ragmeter
from ragmeter.core.sample import Chunk, Sample
from ragmeter.judges import Judge, ScriptedBackend


def sample(sid="s", answer="The R2 warranty lasts 24 months [1].", question="How long is the R2 warranty?"):
    return Sample(id=sid, question=question, answer=answer,
                  retrieved=(Chunk("c1", text="The R2 has a 24-month warranty."),
                             Chunk("c2", text="Returns: 30 days.")))


def test_citation_recall_and_precision_from_the_claim_matrix():
    def respond(pid, inputs, messages):
        if pid == "claims.extract":
            return {"claims": [{"id": 1, "text": "The R2 warranty lasts 24 months.", "addresses_question": True,
                                "cites": ["1", "2"]},
                               {"id": 2, "text": "Returns are free.", "addresses_question": True, "cites": ["c2"]},
                               {"id": 3, "text": "It is great.", "addresses_question": False, "cites": []}],
                    "declines": False, "reference_claims": []}
        return {"verdicts": [{"id": 1, "verdict": "supported", "sources": ["c1"], "combined": False, "quote": "24"},
                             {"id": 2, "verdict": "not_found", "sources": [], "combined": False, "quote": ""},
                             {"id": 3, "verdict": "not_found", "sources": [], "combined": False, "quote": ""}]}
    backend = ScriptedBackend(respond)
    r = ragmeter.evaluate([sample()], ["citation_recall", "citation_precision", "faithfulness"], judge=Judge(backend))
    assert r.values("citation_recall") == [pytest.approx(1 / 3)]  # only claim 1 has a supporting citation
    assert r.values("citation_precision") == [pytest.approx(1 / 3)]  # of [1], [2], [c2] only [1] supports
    assert backend.calls == 2  # extraction + one verification: citations cost no extra call
