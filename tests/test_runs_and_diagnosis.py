"""Run directories, resume, summaries with intervals, and failure-point diagnosis."""

from __future__ import annotations

import json

import pytest

import ragmeter
from ragmeter.analysis.diagnosis import count_labels, diagnose, format_problem
from ragmeter.core.bootstrap import bootstrap_ci
from ragmeter.core.sample import Chunk, Sample
from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.runs import list_runs, load_run, start_run

from . import seed_judge

LABEL_METRICS = "hit_rate,reciprocal_rank,ndcg,recall"
JUDGED = "faithfulness,context_recall,factual_correctness(mode='recall'),answer_relevancy,negative_rejection"


@pytest.fixture
def server(seed_server):
    return seed_server


def test_eval_writes_a_self_describing_run(cli, warranty, runs_dir):
    out = cli("eval", warranty / "dataset.jsonl", "--name", "baseline")
    assert out.exit_code == 0 and "run saved:" in out.stdout
    (run,) = list_runs(runs_dir)
    assert run.complete and run.name.endswith("-baseline") and len(run.results) == 6
    setup = run.setup
    assert setup["metrics"]["ndcg@5"]["metric_version"] == 1 and setup["dataset"]["fingerprint"]
    assert setup["options"]["k"] == 5 and setup["ragmeter_version"] == ragmeter.__version__
    assert round(run.summary["ndcg@5"]["mean"], 3) == 0.628 and run.summary["ndcg@5"]["ci95"] is not None
    shown = cli("show", run.path).stdout
    assert "ndcg@5" in shown and "0.628" in shown and "95% CI" in shown
    assert run.name in cli("runs", runs_dir).stdout
    assert [s.id for s in run.samples()] == ["q1", "q2", "q3", "q4", "q5", "q6"]


def test_csv_output(cli, warranty):
    out = cli("eval", warranty / "dataset.jsonl", "--format", "csv", "--metrics", "recall", "--no-save").stdout
    lines = out.splitlines()
    assert lines[0] == "sample_id,metric,status,value,reason" and len(lines) == 7
    assert lines[1].startswith("q1,recall@5,scored,0.666")


def test_interrupted_run_is_marked_and_resumes_without_repeating_calls(cli, warranty, server, runs_dir):
    args = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
            "--metrics", "faithfulness,context_recall", "--judge", "openai:m", "--judge-base-url",
            server.url + "/v1", "--concurrency", "1"]
    server.queue({}, {}, {"status": 401})  # extraction and one verification, then the key is refused
    failed = cli(*args)
    assert failed.exit_code == 2
    (run,) = list_runs(runs_dir)
    assert not run.complete and "--resume" in cli("show", run.path).stdout
    calls_before = server.count
    resumed = cli("eval", "--resume", run.path)
    assert resumed.exit_code == 0, resumed.output
    assert load_run(run.path).complete
    assert server.count == calls_before + 1  # only the verification that never completed


def test_bootstrap_interval_is_seeded_and_order_free():
    values = [0.1, 0.9, 0.5, 0.7, 0.3, 1.0, 0.0]
    a = bootstrap_ci(values)
    assert a == bootstrap_ci(values) and a[0] < sum(values) / len(values) < a[1]
    from ragmeter.core.summary import summarize_values
    assert summarize_values("m", values, []).ci95 == summarize_values("m", values[::-1], []).ci95


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


def test_diagnose_command(cli, warranty, server, runs_dir):
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--metrics",
              LABEL_METRICS + "," + JUDGED, "--judge", "openai:m", "--judge-base-url", server.url + "/v1")
    assert out.exit_code == 0, out.output
    (run,) = list_runs(runs_dir)
    text = cli("diagnose", run.path).stdout
    assert text.startswith("q1: missing_chunk, buried, not_extracted")
    doc = json.loads(cli("diagnose", run.path, "--format", "json").stdout)
    assert doc["counts"]["buried"] == 2


def _row(sid, **metrics):
    return {"id": sid, "metrics": {k: {"status": "scored", "value": v} for k, v in metrics.items()}}


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


def test_labels_the_sample_could_not_have_evidence_for_are_not_listed_as_not_checked():
    """An agent's run (no retrieved list, no context, action metrics only) used to list every
    retrieval and answer-vs-context label as not checked; it lists only what it could have had."""
    (agent,) = diagnose([_s(retrieved=(), relevance={})], [_row("s", action_pass_rate=1.0)])
    assert agent.not_checked == {} and agent.labels == []
    (answered,) = diagnose([_s(retrieved=(), relevance={}, context=("c1",))], [_row("s", action_pass_rate=1.0)])
    assert set(answered.not_checked) == {"not_extracted", "incomplete", "incorrect_specificity"}  # a context
    (scored,) = diagnose([_s(retrieved=(), relevance={})], [_row("s", **{"hit_rate@5": 0.0})])
    assert set(scored.not_checked) == {"buried"}  # a retrieval metric in the run: its gaps still said


def test_start_run_writes_running_status(tmp_path):
    start_run(tmp_path / "r", {"dataset": "x"})
    assert load_run(tmp_path / "r").setup["status"] == "running"
