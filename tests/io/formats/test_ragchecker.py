"""RAGChecker's example files as published (tests/data/ragchecker): ``checking_inputs.json`` read as
it is (pretty-printed, and minified to one line), and our claim metrics compared with its
``checking_outputs.json``: a scripted judge gives RAGChecker's own claims and verdicts, and every
metric whose definition matches RAGChecker's equals the number RAGChecker published."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragmeter
from ragmeter.judges import Judge, ScriptedBackend

DATA = Path(__file__).resolve().parents[2] / "data" / "ragchecker"
INPUTS = DATA / "checking_inputs.json"
OUTPUTS_PATH = DATA / "checking_outputs.json"
OUTPUTS = json.loads(OUTPUTS_PATH.read_text())
PUBLISHED = {r["query_id"]: r for r in OUTPUTS["results"]}

# our measure -> RAGChecker's name for the same definition (their metrics.py / the paper)
SAME = {
    "factual_correctness(mode='precision')": "precision",  # response claims the gt answer entails
    "factual_correctness(mode='recall')": "recall",  # gt claims the response entails
    "factual_correctness": "f1",
    "claim_recall": "claim_recall",  # gt claims some chunk entails
    "faithfulness(evidence='per_chunk')": "faithfulness",  # response claims some chunk entails
    "hallucination": "hallucination",
    "self_knowledge": "self_knowledge",
    "noise_sensitivity(chunks='relevant')": "noise_sensitivity_in_relevant",
    "noise_sensitivity(chunks='irrelevant')": "noise_sensitivity_in_irrelevant",
    "context_utilization": "context_utilization",
}


def test_the_published_file_is_pretty_printed_json_with_results():
    text = INPUTS.read_text()
    assert text.startswith('{\n  "results": [\n    {\n')


@pytest.mark.parametrize("minified", [False, True])
def test_checking_inputs_read_as_published(tmp_path, minified):
    """Called 'not valid JSON ... one complete JSON object per line' before; minified, one empty
    sample and exit 0; unwrapped, gt_answer was suggested as "answer"."""
    path = INPUTS
    if minified:
        path = tmp_path / "checking_inputs.json"
        path.write_text(json.dumps(json.loads(INPUTS.read_text()), separators=(",", ":")))
        assert path.read_text().count("\n") == 0
    data = ragmeter.load_dataset(path)
    published = json.loads(INPUTS.read_text())["results"]
    assert [s.id for s in data] == ["0", "1"]
    for s, r in zip(data, published):
        assert s.question == r["query"] and s.answer == r["response"] and s.reference == r["gt_answer"]
        assert s.retrieved_ids == tuple(c["doc_id"] for c in r["retrieved_context"])
        assert [c.text for c in s.retrieved] == [c["text"] for c in r["retrieved_context"]]


def test_the_cli_reads_it(cli, tmp_path):
    out = cli("eval", INPUTS, "--metrics", "precision", "--no-save")
    assert "no relevance labels" in out.output and "0: " not in out.stderr
    assert out.exit_code in (0, 2), out.output  # RAGChecker's input has no chunk labels: nothing to rank


def _claim(triplet: list[str]) -> str:
    return " ".join(triplet)


def _verdict(labels: list[str], chunk_ids: list[str]) -> tuple[str, list[str]]:
    """RAGChecker's per-chunk labels of one claim -> our verdict and its sources: supported when a
    chunk entails it alone (RAGChecker checks each chunk on its own), else contradicted when one
    contradicts it, else not found."""
    for name, label in (("supported", "Entailment"), ("contradicted", "Contradiction")):
        sources = [cid for cid, x in zip(chunk_ids, labels) if x == label]
        if sources:
            return name, sources
    return "not_found", []


def ragchecker_judge() -> Judge:
    """Answers our prompts with RAGChecker's own extraction and checking results."""
    by_text = {}
    for r in OUTPUTS["results"]:
        by_text[r["response"]] = by_text[r["gt_answer"]] = r
        for c in r["retrieved_context"]:
            by_text[c["text"]] = r

    def find(evidence: str) -> dict:
        return next(r for text, r in by_text.items() if text in evidence)

    def respond(prompt, inputs, messages):
        if prompt == "claims.extract":
            r = by_text[inputs["answer"]]
            return {"claims": [{"id": i, "text": _claim(t), "addresses_question": True, "cites": []}
                               for i, t in enumerate(r["response_claims"], start=1)],
                    "declines": False,
                    "reference_claims": [{"id": i, "text": _claim(t)}
                                         for i, t in enumerate(r["gt_answer_claims"], start=1)]}
        assert prompt == "claims.verify"
        r = find(inputs["evidence"])
        answer_side = inputs["claims"].startswith("1. " + _claim(r["response_claims"][0]) + "\n")
        chunk_ids = [c["doc_id"] for c in r["retrieved_context"]]
        if inputs["evidence"].startswith("[reference]"):
            rows, ids = [[x] for x in r["answer2response"]], ["reference"]
        elif inputs["evidence"].startswith("[answer]"):
            rows, ids = [[x] for x in r["response2answer"]], ["answer"]
        else:
            rows, ids = r["retrieved2response" if answer_side else "retrieved2answer"], chunk_ids
        verdicts = []
        for i, labels in enumerate(rows, start=1):
            verdict, sources = _verdict(labels, ids)
            verdicts.append({"id": i, "verdict": verdict, "sources": sources, "combined": False,
                             "quote": "" if verdict == "not_found" else "..."})
        return {"verdicts": verdicts}

    return Judge(ScriptedBackend(respond))


def test_claim_metrics_equal_ragcheckers_published_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_RUNS_DIR", str(tmp_path / "runs"))
    result = ragmeter.evaluate(INPUTS, list(SAME), judge=ragchecker_judge())
    names = list(result.means())
    assert len(names) == len(SAME)
    for name, theirs in zip(names, SAME.values()):
        published = [PUBLISHED[qid]["metrics"][theirs] for qid in ("0", "1")]
        assert result.values(name) == pytest.approx(published, abs=1e-12), name
        # the overall figures RAGChecker prints: the mean over queries, in percent, one decimal
        section = next(v for v in OUTPUTS["metrics"].values() if theirs in v)
        assert round(100 * result.means()[name], 1) == section[theirs], name


def test_context_precision_is_not_ours():
    """RAGChecker's retriever context_precision is the share of retrieved chunks that entail a gt
    claim (3 of 4 for query 0), not rank-weighted: ours (judged_context_precision) weights by rank
    and is documented as the Ragas/DeepEval form, so no equality is claimed."""
    r = PUBLISHED["0"]
    chunks = range(len(r["retrieved_context"]))
    relevant = [any(row[j] == "Entailment" for row in r["retrieved2answer"]) for j in chunks]
    assert sum(relevant) / len(relevant) == r["metrics"]["context_precision"] == 0.75


def test_checking_outputs_read_as_published():
    """It stopped at 'unknown field "gt_answer_claims". Fix: did you mean "answer_claims"?' (the
    reference's claims, not the answer's)."""
    from ragmeter.io import load_dataset
    data = load_dataset(DATA / "checking_outputs.json")
    first = OUTPUTS["results"][0]
    s = data.samples[0]
    assert s.answer_claims == tuple(" ".join(t) for t in first["response_claims"])
    assert s.reference_claims == tuple(" ".join(t) for t in first["gt_answer_claims"])
    assert s.metadata["ragchecker"]["retrieved2response"] == first["retrieved2response"]
    assert s.reference == first["gt_answer"]
    assert [c.id for c in s.retrieved] == [c["doc_id"] for c in first["retrieved_context"]]


def test_the_given_judge_reproduces_ragcheckers_published_numbers_with_no_call(tmp_path, monkeypatch):
    """``--judge given`` reads RAGChecker's own verdicts from ``checking_outputs.json``: every metric
    whose definition matches RAGChecker's equals its published number, and nothing is asked."""
    monkeypatch.setenv("RAGMETER_RUNS_DIR", str(tmp_path / "runs"))
    result = ragmeter.evaluate(OUTPUTS_PATH, list(SAME), judge="given")
    names = list(result.means())
    assert len(names) == len(SAME)
    for name, theirs in zip(names, SAME.values()):
        assert result.values(name) == [PUBLISHED[qid]["metrics"][theirs] for qid in ("0", "1")], name
        section = next(v for v in OUTPUTS["metrics"].values() if theirs in v)
        assert round(100 * result.means()[name], 1) == section[theirs], name
    assert result.judge_stats["calls"] == 0 and result.judge_stats["requests"] == 0


def test_given_verdicts_of_the_wrong_shape_are_refused_naming_the_field(tmp_path):
    from ragmeter.core.errors import InvalidInputError
    from ragmeter.io import load_dataset

    row = dict(OUTPUTS["results"][0])
    row["retrieved2response"] = [["Entailment"]] * len(row["response_claims"])  # one label, four chunks
    path = tmp_path / "out.json"
    path.write_text(json.dumps({"results": [row]}))
    with pytest.raises(InvalidInputError, match="retrieved2response.*a label per retrieved chunk"):
        load_dataset(path)
