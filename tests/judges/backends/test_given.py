"""``ragmeter.judges.backends.given``: ``--judge given`` reads the verdicts the data holds."""

from __future__ import annotations

import pytest

import ragmeter
from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.core.sample import Chunk, Sample
from ragmeter.judges.backends.factory import make_backend
from ragmeter.judges.backends.given import GivenBackend


def _sample(verdicts: dict | None, claims=("The R2 has 24 months.", "Shipping is free.")) -> Sample:
    return Sample("s", question="?", retrieved=(Chunk("c1", text="The R2 has 24 months."),),
                  answer="The R2 has 24 months. Shipping is free.", answer_claims=claims,
                  metadata={"verdicts": verdicts} if verdicts is not None else {})


def test_the_datas_verdicts_are_the_verdicts_with_no_call():
    given = {"answer@context": [{"verdict": "supported", "sources": ["c1"]}, {"verdict": "not_found", "sources": []}]}
    r = ragmeter.evaluate([_sample(given)], ["faithfulness", "contradiction_rate"], judge="given")
    assert r.outcome("faithfulness", "s").value == 1 / 2 and r.outcome("contradiction_rate", "s").value == 0.0
    assert r.evidence[0].verdicts["answer@context"][0].sources == ("c1",)
    assert r.judge_stats["calls"] == 0


@pytest.mark.parametrize("verdicts, why", [
    (None, "the data gives no verdicts for answer@context"),
    ({"answer@context": [{"verdict": "supported"}]}, "the data gives 1 verdicts for answer@context, for 2 claims")])
def test_missing_or_miscounted_verdicts_are_not_computed_with_the_reason(verdicts, why):
    r = ragmeter.evaluate([_sample(verdicts)], ["faithfulness"], judge="given")
    o = r.outcome("faithfulness", "s")
    assert o.status == "not_computed" and why in o.reason


def test_it_splits_nothing_and_serves_no_other_prompt():
    backend = make_backend("given")
    assert isinstance(backend, GivenBackend) and backend.refuses("claims.verify") is None
    assert "asks no model" in (backend.refuses("context.relevance") or "")
    with pytest.raises(JudgeUnavailableError, match="gives no claims"):
        import asyncio

        from ragmeter.judges.backends.base import Decoding
        from ragmeter.judges.judge import JudgeRequest
        from ragmeter.judges.prompts import load_prompt
        request = JudgeRequest(load_prompt("claims.extract"), {}, {}, "claims")
        asyncio.run(backend.complete([], {}, "claims", Decoding(), request))
