"""``ragmeter.report.table``: The plain per-query table and summary, laid out as the seed article prints them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragmeter
from ragmeter.core.sample import Sample
from ragmeter.engine.evaluate import evaluate
from ragmeter.report.table import render_table
from tests.columnar_samples import columnar, label_samples, per_sample


def test_a_table_with_several_cutoffs_names_each_cutoff() -> None:
    """``-m ndcg@10,mrr`` shows ranks 1-10 and scored RR at the default --k 5: the first relevant
    chunk at rank 7 read as 'RR 0.000' under 'ranks 1-10', and the mean line said 'MRR 0.000'."""
    from ragmeter.report.table import render_table

    rows = [{"id": "q1", "retrieved": list("abcdefg"), "relevant": ["g"]}]
    result = ragmeter.evaluate(rows, "ndcg@10,mrr,hit_rate")  # k=5 for the two without @k
    header, _row, _blank, means = render_table(result).splitlines()[:4]
    assert header.split()[-3:] == ["nDCG@10", "RR@5", "hit@5"]
    assert means.split("|")[1].strip() == "MRR@5 0.000"
    assert result.values("ndcg@10") == [1 / np.log2(8)]  # one relevant at rank 7: 1/log2(8) over 1
    same_k = render_table(ragmeter.evaluate(rows, "ndcg@10,mrr@10")).splitlines()
    assert same_k[0].split()[-2:] == ["nDCG@10", "RR"]  # one cut-off: the ranks shown are its
    assert same_k[1].split()[-1] == f"{1 / 7:.3f}"


SECRET = "sk-fastscore-0123456789"  # a held credential (set as an API key below): redacted in run files


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(samples=label_samples(SECRET), k=st.sampled_from([None, 2, 5]))
def test_the_table_from_the_columns_is_the_table_from_the_samples(samples: list[Sample], k: int | None) -> None:
    names = ["hit_rate@2", "precision", "ndcg@3", "recall"]
    fast = evaluate(columnar(samples), names, k=k)
    assert render_table(fast) == render_table(per_sample(samples, names, k))


def test_the_action_pass_rate_is_printed_with_its_verification_coverage(warranty):
    """Agent Assurance reports a pass rate over the cases that reached a verdict *and* the
    verification coverage; the table printed "2 scored, 2 not computed" and no coverage. The
    figure is the one the Python summary (``ragmeter.actions.summarise``) gives on the same cases."""
    from ragmeter.actions import grade_cases, load_criteria, load_runs, summarise
    from ragmeter.records import RecordLookup, TableSource

    criteria = load_criteria(warranty / "criteria.yaml")
    result = ragmeter.evaluate(ragmeter.load_dataset(warranty / "agent_runs.jsonl"), ["action_pass_rate"],
                               action_criteria=criteria, records=RecordLookup(TableSource(warranty / "records.jsonl")))
    mean = render_table(result).splitlines()[6]
    assert mean == "mean   action pass rate 0.500 (verification coverage 0.500: 2 of 4 cases reached a verdict)"
    python = summarise(grade_cases(load_runs(warranty / "agent_runs.jsonl"), criteria,
                                   records=RecordLookup(TableSource(warranty / "records.jsonl"))))
    assert (python.pass_rate, python.coverage) == (0.5, 2 / 4)


def test_coverage_leaves_out_the_cases_no_criterion_applies_to():
    from ragmeter.report.table import coverage_note

    assert coverage_note("action_pass_rate", 1, {"no criterion applies to this case": 2, "unable to verify: x": 1}) \
        == " (verification coverage 0.500: 1 of 2 cases reached a verdict)"
    assert coverage_note("action_pass_rate", 0, {"no criterion applies to this case": 2}) == \
        " (verification coverage n/c: 0 of 0 cases reached a verdict)"
    assert coverage_note("faithfulness", 1, {"x": 1}) == ""


def test_no_cutoff_draws_at_most_twenty_ranks_and_says_how_long_the_lists_are(cli, tmp_path):
    """``eval --k 0`` on lists of 540 chunks drew a ranks column 540 characters wide."""
    data = tmp_path / "long.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "q1", "retrieved": [f"d{i}" for i in range(540)], "relevant": ["d3", "d300"]},
        {"id": "q2", "retrieved": ["d3", "d4"], "relevant": ["d3"]}]))
    out = cli("eval", data, "--k", "0", "-m", "recall,ndcg", "--no-save")
    assert out.exit_code == 0, out.output
    header, q1, q2 = out.stdout.splitlines()[:3]
    assert header.split("  ")[1] == "ranks 1-20 of 540"
    assert q1.split()[1] == "...R" + "." * 16 and q2.split()[1] == "R." + "-" * 18
    assert max(len(line) for line in out.stdout.splitlines()[:3]) < 80
    huge = cli("eval", data, "--k", "1000000000", "-m", "recall", "--no-save")  # past every list: no cut-off
    assert huge.stdout.splitlines()[0].split("  ")[1] == "ranks 1-20 of 540"
    five = cli("eval", data, "--k", "0", "-m", "recall", "--no-save", "--only", "q2")  # short lists: as before
    assert five.stdout.splitlines()[0].startswith("query  ranks 1-2  relevant")


# --- the judge line ---------------------------------------------------------------------------

def _judged(name: str, model: str, tokens: bool):
    """faithfulness on one answer through a scripted backend with the given identity, which
    reports tokens or none (the offline judge's evidence rule spends none)."""
    from ragmeter.core.sample import Chunk
    from ragmeter.judges import Judge, ScriptedBackend
    from ragmeter.judges.backends.base import Reply

    class Identity(ScriptedBackend):
        async def complete(self, messages, schema, schema_name, decoding, request=None) -> Reply:
            reply = await super().complete(messages, schema, schema_name, decoding, request)
            return reply if tokens else Reply(reply.text, 0, 0, 0.0)

    def respond(pid, inputs, messages):
        if pid == "claims.extract":
            return {"claims": [{"id": 1, "text": "The R2 warranty lasts 24 months.", "addresses_question": True,
                                "cites": []}], "declines": False, "reference_claims": []}
        return {"verdicts": [{"id": 1, "verdict": "supported", "sources": ["c1"], "combined": False, "quote": ""}]}

    sample = Sample(id="s", question="How long is the R2 warranty?", answer="The R2 warranty lasts 24 months.",
                    retrieved=(Chunk("c1", text="The R2 has a 24-month warranty."),))
    return ragmeter.evaluate([sample], ["faithfulness"], judge=Judge(Identity(respond, model=model, name=name)))


def test_the_offline_judge_line_says_judgments_and_no_model_call():
    """Trial 2, item 10: the offline judge's line read '5 calls ..., 0 re-asks, ..., 0 input + 0
    output tokens' for a judge that made no model call."""
    from ragmeter.report.table import judge_line

    offline = _judged("local", "offline evidence (MiniLM int8)", tokens=False)
    assert judge_line("local", offline) == ("judge local: 2 judgments (2.0 per sample; offline evidence, no model "
                                            "call), 0 from the ledger, 0 failed")
    offline.judge_stats.update(calls=1, cached=1)
    assert judge_line("local", offline).startswith("judge local: 1 judgment (1.0 per sample; ")


def test_a_judge_that_spent_tokens_or_is_not_offline_keeps_the_calls_line():
    from ragmeter.report.table import judge_line

    api = judge_line("openai:m", _judged("openai", "m", tokens=True))
    assert api.startswith("judge openai:m: 2 calls (2.0 per sample), 0 re-asks, 0 from the ledger, 0 failed, ")
    assert api.endswith(" output tokens") and " 0 input + 0 output" not in api
    silent_api = judge_line("openai:m", _judged("openai", "m", tokens=False))  # a server reporting no usage
    assert silent_api.endswith("0 input + 0 output tokens")
    model_stage = judge_line("local:m.gguf", _judged("local", "offline evidence + m.gguf", tokens=True))
    assert " calls (" in model_stage and " re-asks, " in model_stage  # the model answered: its tokens are shown


def test_the_offline_judges_line_says_whether_its_model_stage_ran():
    """The new-user trial: --judge local:model ran the model and said "no model call"."""
    from ragmeter.report.table import offline_means

    assert offline_means({"backend": "local", "stages": ["evidence"]}) == "offline evidence, no model call"
    assert "model asked about uncertain claims" in offline_means({"backend": "local", "stages": ["evidence", "model"]})
