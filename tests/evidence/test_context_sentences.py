"""``evidence/context_sentences.py``: the context split into numbered sentences, and which the judge needs."""

from __future__ import annotations

from ragmeter.core.sample import Chunk, Sample
from tests.evidence.gathering import gather


def test_the_needed_sentences_are_read_by_their_numbers():
    sample = Sample(id="q1", question="How long is the R2 warranty?",
                    retrieved=(Chunk("r2", None, "The R2 has a 24-month warranty. It covers parts."),
                               Chunk("ship", None, "Shipping is free.")))
    (ev,), seen = gather([sample], {"context_sentences"}, lambda *_: {"needed": [1, 3]})
    assert ev.sentences == ("The R2 has a 24-month warranty.", "It covers parts.", "Shipping is free.")
    assert ev.needed_sentences == (1, 3)
    ((prompt, inputs),) = seen
    assert prompt == "context.relevance" and inputs["question"] == "How long is the R2 warranty?"
    assert "1. The R2 has a 24-month warranty." in inputs["sentences"] and "3. Shipping is free." in inputs["sentences"]
