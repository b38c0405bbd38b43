"""Diagnosis finds a run's metrics through the registry: a key that names the metric another
way (an alias, a spelled-out default) counts, one with other parameters does not."""

from __future__ import annotations

import json
import time

import pytest

import ragmeter
from ragmeter import InvalidInputError
from ragmeter.analysis.diagnosis import REGEX_TIMEOUT_S, count_labels, diagnose, diagnose_sample, format_problem
from ragmeter.core.sample import Chunk, Sample
from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.runs import list_runs
from tests import seed_judge


def _row(sid: str = "q", **values: float) -> dict:
    return {"id": sid, "metrics": {k: {"status": "scored", "value": v} for k, v in values.items()}}


SAMPLE = Sample("q", question="?", retrieved=[Chunk("a"), Chunk("b"), Chunk("c")], relevance={"c": 1})


def test_aliases_and_spelled_out_defaults_are_the_metric():
    d = diagnose_sample(SAMPLE, _row(**{"hit_rate@3": 1.0, "mrr@3": 1 / 3, "ndcg(gain='linear')@3": 0.5}))
    assert d.labels == ["buried"] and "nDCG@3 0.500" in d.findings[0].evidence
    assert "buried" not in d.not_checked


def test_a_variant_with_other_parameters_is_not_the_metric():
    d = diagnose_sample(SAMPLE, _row(**{"hit_rate@3": 1.0, "reciprocal_rank(granular=True)@3": 0.1}))
    assert d.not_checked["buried"] == "needs hit_rate@k and reciprocal_rank@k or ndcg@k"
    judged = diagnose_sample(SAMPLE, _row(**{"faithfulness(unsupported='pass')": 0.9, "context_recall": 0.9}))
    assert judged.not_checked["not_extracted"] == "needs faithfulness and context_recall"


def test_diagnose_says_which_checks_could_not_be_verified_and_why(cli, warranty, runs_dir, tmp_path):
    """Without --records or a judge, a2-a4's criteria are Unable to Verify: diagnose said "no failure
    point found" for them, as for a case that passed."""
    from ragmeter.runs import list_runs

    out = cli("eval", warranty / "agent_runs.jsonl", "--action-criteria", warranty / "criteria.yaml",
              "-m", "action_pass_rate", "--judge", "none")
    assert out.exit_code == 0, out.output
    (run,) = list_runs(runs_dir)
    text = cli("diagnose", run.path).stdout
    assert "no failure point found" not in text
    a4 = text.split("a4: ", 1)[1].split("\n\n", 1)[0].splitlines()
    assert a4 == ["unable to verify: failed_action (nothing failed in what could be checked)",
                  "    unable to verify (failed_action): no tool calls were recorded for this case (declared_tools, "
                  "warranty-checked-first, one-order-at-most, order-placed)",
                  "    unable to verify (failed_action): no record source was given (order-on-record)"]
    assert "queries with checks that could not be verified: 4 (not counted as passed)" in text
    doc = json.loads(cli("diagnose", run.path, "--format", "json").stdout)
    a3 = next(q for q in doc["queries"] if q["id"] == "a3")
    assert a3["findings"] == [] and a3["unverified"] == [{"label": "failed_action",
                                                         "reason": "no record source was given (order-on-record)"}]
    assert cli("report", run.path, "--html", tmp_path / "r.html").exit_code == 0
    page = (tmp_path / "r.html").read_text()
    assert "unable to verify: no record source was given (order-on-record)" in page


def test_expected_format_regex_that_does_not_compile_is_located():
    with pytest.raises(InvalidInputError, match=r'record "q7", field "metadata.expected_format.regex": the regex'):
        format_problem("an answer", {"regex": "("}, sample="q7")


@pytest.mark.slow
def test_catastrophic_regex_is_cut_off():
    # (a|aa)+$ on 60 a's and a '!' backtracks fib(60) times in the standard library's re
    start = time.monotonic()
    with pytest.raises(InvalidInputError, match=r"did not finish within"):
        format_problem("a" * 60 + "!", {"regex": "(a|aa)+$"}, sample="q1")
    assert time.monotonic() - start < REGEX_TIMEOUT_S + 10
    assert format_problem("ok 42", {"regex": r"\d+"}, sample="q1") is None


LABEL_METRICS = "hit_rate,reciprocal_rank,ndcg,recall"


JUDGED = "faithfulness,context_recall,factual_correctness(mode='recall'),answer_relevancy,negative_rejection"


@pytest.fixture
def server(seed_server):
    return seed_server


def _warranty_rows(warranty):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    result = ragmeter.evaluate(data, LABEL_METRICS.split(",") + JUDGED.split(","),
                               judge=Judge(ScriptedBackend(seed_judge.scripted)))
    return data.samples, result.to_dict()["samples"]


def test_diagnosis_of_the_warranty_sample(warranty):
    samples, rows = _warranty_rows(warranty)
    found = {d.id: d for d in diagnose(samples, rows)}
    # ranking, missing chunk, altered fact
    assert set(found["q1"].labels) == {"buried", "missing_chunk", "not_extracted"}
    q1 = {f.label: f.evidence for f in found["q1"].findings}
    assert "exclusions not retrieved" in q1["missing_chunk"]
    assert "2 business days" in q1["not_extracted"]
    assert "contradicted by claim-steps (altered fact)" in q1["not_extracted"]
    assert found["q3"].labels == ["buried"] and "rank 5" in found["q3"].findings[0].evidence
    assert found["q5"].labels == ["missed_top_ranked"] and "transfer" in found["q5"].findings[0].evidence
    assert found["q2"].labels == found["q4"].labels == found["q6"].labels == []
    counts = count_labels(found.values())
    assert counts["buried"] == 2 and counts["missed_top_ranked"] == 1
    # the article's lever for each failure point
    levers = {f.label: f.lever for f in found["q1"].findings}
    assert levers == {"buried": "rerank; nothing else has to change",
                      "missing_chunk": "raise k, then revisit chunking and the embedding model (no prompt change "
                                       "repairs it)",
                      "not_extracted": "work on the prompt, the generator and the noise around the chunk"}
    assert found["q5"].findings[0].lever == levers["missing_chunk"]
    assert found["q1"].as_dict()["findings"][0]["lever"] == levers["missing_chunk"]


def test_diagnose_command(cli, warranty, server, runs_dir):
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--metrics",
              LABEL_METRICS + "," + JUDGED, "--judge", "openai:m", "--judge-base-url", server.url + "/v1")
    assert out.exit_code == 0, out.output
    (run,) = list_runs(runs_dir)
    text = cli("diagnose", run.path).stdout
    assert text.startswith("q1: missing_chunk, buried, not_extracted")
    assert "    buried: first relevant chunk at rank 2; nDCG@5 0.498\n        lever: rerank; nothing else has to " \
           "change\n" in text
    doc = json.loads(cli("diagnose", run.path, "--format", "json").stdout)
    assert doc["counts"]["buried"] == 2


def _s(sid="s", **kw):
    base = dict(id=sid, retrieved=(Chunk("a"), Chunk("b")), relevance={"a": 1.0}, answer="ok")
    base.update(kw)
    return Sample(**base)


def test_missing_content_says_whether_the_answer_declined():
    s = _s(answerable=False, relevance={})
    row = _row("s")
    row["evidence"] = {"declines": True}
    (d,) = diagnose([s], [row])
    assert d.labels == ["missing_content"] and "the answer declined" in d.findings[0].evidence


def test_not_in_context():
    s = _s(context=("b",))
    (d,) = diagnose([s], [_row("s", **{"hit_rate@5": 1.0, "recall@5": 1.0, "reciprocal_rank@5": 1.0})])
    assert d.labels == ["not_in_context"] and "a" in d.findings[0].evidence


def test_incomplete_tells_context_fault_from_retrieval_fault():
    row = _row("s", faithfulness=1.0, **{"factual_correctness(mode='recall')": 0.5})
    row["evidence"] = {"reference_claims": [{"id": 1, "text": "X"}, {"id": 2, "text": "Y"}],
                       "verdicts": {"reference@answer": [{"claim": 1, "verdict": "not_found"},
                                                         {"claim": 2, "verdict": "not_found"}],
                                    "reference@context": [{"claim": 1, "verdict": "supported"},
                                                          {"claim": 2, "verdict": "not_found"}]}}
    (d,) = diagnose([_s()], [row])
    assert d.labels == ["incomplete"]
    assert '"X" missing; it was in the context (incomplete)' in d.findings[0].evidence
    assert '"Y" missing; it was not in the context (a retrieval fault)' in d.findings[0].evidence


def test_incorrect_specificity():
    (d,) = diagnose([_s()], [_row("s", faithfulness=0.9, answer_relevancy=0.4)])
    assert d.labels == ["incorrect_specificity"]


@pytest.mark.parametrize("answer,expected,ok", [
    ('{"a": 1}', "json", True), ("not json", "json", False),
    ("- one\n- two", "list", True), ("one sentence", "list", False),
    ("| a | b |\n|---|---|\n| 1 | 2 |", "table", True), ("a, b", "table", False),
    ("Order R2-123", {"regex": r"R2-\d+"}, True), ("no order", {"regex": r"R2-\d+"}, False),
])
def test_wrong_format(answer, expected, ok):
    assert (format_problem(answer, expected) is None) == ok
    (d,) = diagnose([_s(answer=answer, metadata={"expected_format": expected})], [_row("s")])
    assert ("wrong_format" in d.labels) != ok


def test_labels_whose_metrics_are_missing_are_not_checked():
    (d,) = diagnose([_s()], [_row("s")])
    assert "not_extracted" in d.not_checked and "buried" in d.not_checked and d.labels == []
    # the new-user trial: a claims-only run did not list missing_chunk, which needs recall@k
    assert d.not_checked["missing_chunk"] == "needs hit_rate@k and recall@k"
    (hit_only,) = diagnose([_s()], [_row("s", **{"hit_rate@5": 1.0})])
    assert hit_only.not_checked["missing_chunk"] == "needs hit_rate@k and recall@k"
    (both,) = diagnose([_s()], [_row("s", **{"hit_rate@5": 1.0, "recall@5": 1.0})])
    assert "missing_chunk" not in both.not_checked and "missing_chunk" not in both.labels


def test_labels_the_sample_could_not_have_evidence_for_are_not_listed_as_not_checked():
    """An agent's run (no retrieved list, no context, action metrics only) used to list every
    retrieval and answer-vs-context label as not checked; it lists only what it could have had."""
    (agent,) = diagnose([_s(retrieved=(), relevance={})], [_row("s", action_pass_rate=1.0)])
    assert agent.not_checked == {} and agent.labels == []
    (answered,) = diagnose([_s(retrieved=(), relevance={}, context=("c1",))], [_row("s", action_pass_rate=1.0)])
    assert set(answered.not_checked) == {"not_extracted", "incomplete", "incorrect_specificity",  # a context
                                         "unsupported_answer", "false_refusal"}
    (scored,) = diagnose([_s(retrieved=(), relevance={})], [_row("s", **{"hit_rate@5": 0.0})])
    assert set(scored.not_checked) == {"buried"}  # a retrieval metric in the run: its gaps still said


def test_every_failure_point_has_a_lever():
    from ragmeter.analysis.diagnosis import LABELS, LEVERS

    assert set(LEVERS) == set(LABELS) and all(LEVERS.values())
    s = _s(answer="Not JSON", metadata={"expected_format": "json"})
    (d,) = diagnose([s], [_row("s")])
    assert [(f.label, f.lever) for f in d.findings] == [("wrong_format", "assert the format in code: no text metric "
                                                                         "measures it")]


def _declined(**values):
    row = _row("s", **values)
    row["evidence"] = {"declines": True, "answer_claims": []}
    return row


def test_a_refusal_of_an_answerable_question_names_where_the_answer_was():
    (d,) = diagnose([_s(context=("a", "b"))], [_declined()])  # the relevant chunk a reached the prompt
    assert d.labels == ["false_refusal"]
    assert d.findings[0].evidence == "the answer declined an answerable question; relevant chunks in the prompt: a"
    assert d.findings[0].lever == "work on the prompt and the generator: the answer was in the context"
    (d,) = diagnose([_s(context=("b",))], [_declined()])  # it did not (dropped when the context was assembled)
    assert d.labels == ["not_in_context", "false_refusal"]
    assert "no relevant chunk reached the prompt (relevant: a)" in d.findings[1].evidence
    assert d.findings[1].lever == d.findings[0].lever  # keep the chunk when the context is assembled
    (d,) = diagnose([_s(retrieved=(Chunk("b"),), context=("b",))], [_declined()])  # never retrieved
    assert d.findings[0].lever.startswith("fix retrieval first: raise k")
    (d,) = diagnose([_s(relevance={}, context=("a",))], [_declined(context_recall=0.2)])  # no labels: context recall
    assert "context recall 0.20" in d.findings[0].evidence and d.findings[0].lever.startswith("fix retrieval")
    (d,) = diagnose([_s(relevance={}, context=("a",))], [_declined()])
    assert "is not known" in d.findings[0].evidence and d.findings[0].lever.startswith("where the answer was")


def test_a_refusal_is_no_finding_on_an_unanswerable_question_or_when_the_answer_does_not_decline():
    (d,) = diagnose([_s(answerable=False, relevance={})], [_declined()])
    assert d.labels == ["missing_content"]
    row = _row("s")
    row["evidence"] = {"declines": False}
    (d,) = diagnose([_s()], [row])
    assert "false_refusal" not in d.labels and "false_refusal" not in d.not_checked
    (d,) = diagnose([_s()], [_row("s")])  # no refusal judged
    assert d.not_checked["false_refusal"].startswith("needs false_refusal")


def _claims_row(verdicts, **values):
    row = _row("s", faithfulness=sum(v == "supported" for v in verdicts) / len(verdicts), **values)
    row["evidence"] = {"answer_claims": [{"id": i, "text": f"claim {i}"} for i in range(1, len(verdicts) + 1)],
                       "verdicts": {"answer@context": [{"claim": i, "verdict": v, "sources": [], "combined": False,
                                                        "quote": ""} for i, v in enumerate(verdicts, start=1)]}}
    return row


def test_an_answer_whose_claims_are_mostly_not_found():
    (d,) = diagnose([_s()], [_claims_row(["supported", "not_found", "not_found", "not_found"])])
    assert d.labels == ["unsupported_answer"]
    assert d.findings[0].evidence == ('3 of 4 claims not found in the context: "claim 2"; "claim 3"; "claim 4"')
    assert d.findings[0].lever.startswith("work on the prompt and the generator: require answers from the context")
    (d,) = diagnose([_s()], [_claims_row(["supported", "supported", "not_found", "not_found"])])  # half: not most
    assert "unsupported_answer" not in d.labels
    (d,) = diagnose([_s()], [_claims_row(["not_found", "not_found", "contradicted"], context_recall=0.25)])
    assert d.labels == ["unsupported_answer"]
    assert d.findings[0].lever.startswith("fix retrieval first (context recall 0.25")
    (d,) = diagnose([_s()], [_row("s")])
    assert d.not_checked["unsupported_answer"] == "needs faithfulness (the answer-vs-context verdicts)"
