"""``ragmeter.metrics.context.judged_context``: context metrics judged against the reference answer
and, for ``response_context_precision``, against the generated answer (no reference needed)."""

from __future__ import annotations

import pytest

import ragmeter
from ragmeter.core.sample import Chunk, Sample
from ragmeter.judges import Judge, NoCallBackend, ScriptedBackend
from ragmeter.ledger import Ledger
from tests import seed_judge

TEXTS = {"a": "The R2 has a 24-month warranty.", "b": "Returns within 30 days.", "c": "Claims ship in 5 days.",
         "d": "LEDs blink."}


def _judge(verdicts):
    """A judge whose answer has one claim per verdict: (verdict, sources)."""
    def respond(prompt_id, inputs, messages):
        if prompt_id == "claims.extract":
            return {"claims": [{"id": i, "text": f"claim {i}", "addresses_question": True, "cites": []}
                               for i in range(1, len(verdicts) + 1)], "declines": False, "reference_claims": []}
        return {"verdicts": [{"id": i, "verdict": v, "sources": s, "combined": False, "quote": ""}
                             for i, (v, s) in enumerate(verdicts, start=1)]}
    backend = ScriptedBackend(respond)
    return Judge(backend), backend


def _sample(**kw):
    return Sample(id="s", question="Q?", answer="An answer.", retrieved=tuple(Chunk(c, text=TEXTS[c]) for c in "abcd"),
                  **kw)


def test_seed_q1_response_based_precision_equals_the_reference_based_one(warranty):
    """q1's supported answer claims rest on warranty-r2 (rank 2) and claim-steps (rank 4), the chunks
    the reference's claims rest on: both read (1/2 + 2/4) / 2."""
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    r = ragmeter.evaluate([data.samples[0]], ["response_context_precision", "judged_context_precision"],
                          judge=Judge(ScriptedBackend(seed_judge.scripted)))
    assert r.values("response_context_precision") == [pytest.approx((1 / 2 + 2 / 4) / 2)]
    assert r.values("judged_context_precision") == r.values("response_context_precision")


def test_a_chunk_counts_when_it_supports_an_answer_claim_at_its_rank():
    """Claims supported by chunks a (rank 1) and c (rank 3); one contradicted by d (rank 4), which
    therefore does not count: (1/1 + 2/3) / 2."""
    judge, backend = _judge([("supported", ["a"]), ("supported", ["c"]), ("contradicted", ["d"]),
                             ("not_found", [])])
    r = ragmeter.evaluate([_sample()], ["response_context_precision"], judge=judge)
    assert r.values("response_context_precision") == [pytest.approx((1 / 1 + 2 / 3) / 2)]
    assert backend.calls == 2  # the claims and their verdicts: nothing more


def test_no_reference_is_needed_live_traffic_is_scored():
    judge, _ = _judge([("supported", ["b"])])
    r = ragmeter.evaluate([_sample()], ["response_context_precision", "judged_context_precision"], judge=judge)
    assert r.values("response_context_precision") == [pytest.approx(1 / 2)]  # one relevant chunk, at rank 2
    assert r["judged_context_precision"][0].reason == "the sample has no reference answer"


def test_no_supported_claim_scores_zero_and_a_refusal_is_not_computed():
    judge, _ = _judge([("not_found", [])])
    assert ragmeter.evaluate([_sample()], ["response_context_precision"], judge=judge).values(
        "response_context_precision") == [0.0]
    judge, _ = _judge([])
    r = ragmeter.evaluate([_sample()], ["response_context_precision"], judge=judge)
    assert r["response_context_precision"][0].reason == "the answer has no claims"


def test_it_reads_the_faithfulness_verdicts_at_no_extra_call(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    judge, _ = _judge([("supported", ["a"])])
    ragmeter.evaluate([_sample()], ["faithfulness"], judge=Judge(judge.backend, ledger=ledger))
    again = ragmeter.evaluate([_sample()], ["response_context_precision"],
                              judge=Judge(NoCallBackend("scripted", "scripted"), ledger=ledger))
    assert again.values("response_context_precision") == [1.0]


def test_the_alias_names_ragas_variant():
    assert str(ragmeter.parse_measure("context_precision_without_reference")) == "response_context_precision"


def test_a_request_that_retrieved_several_times_ranks_the_answers_own_context():
    sample = Sample(id="r#2", question="Q?", answer="An answer.", retrieved=(Chunk("d", text=TEXTS["d"]),),
                    answer_context=tuple(Chunk(c, text=TEXTS[c]) for c in "abcd"))
    judge, _ = _judge([("supported", ["c"])])
    r = ragmeter.evaluate([sample], ["response_context_precision"], judge=judge)
    assert r.values("response_context_precision") == [pytest.approx(1 / 3)]  # c at rank 3 of a, b, c, d
