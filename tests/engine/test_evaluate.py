"""The Python API: values, DataFrames, provenance, and live retrievers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import ragmeter
from ragmeter import InvalidInputError, evaluate, load_dataset
from tests.conftest import WARRANTY


@pytest.fixture
def data(warranty):
    return ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")


def test_dataframe_matches_values(data):
    result = ragmeter.evaluate(data, ["ndcg@5", "mrr@5"])
    df = result.to_dataframe()
    assert list(df.columns) == ["ndcg@5", "reciprocal_rank@5"]
    assert list(df.index) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert df["ndcg@5"].tolist() == result.values("ndcg@5")
    long = result.to_dataframe(long=True)
    assert set(long["status"]) == {"scored"} and len(long) == 12


def test_provenance_on_every_outcome(data):
    result = ragmeter.evaluate(data, ["ndcg(discount='jk2002')@3"])
    for outcome in result["ndcg(discount='jk2002')@3"]:
        p = outcome.provenance
        assert (p.metric, p.metric_name, p.k, p.view) == ("ndcg(discount='jk2002')@3", "ndcg", 3, "retrieved")
        assert p.params["discount"] == "jk2002" and p.dataset_fingerprint == data.fingerprint


def test_results_and_inputs_are_immutable(data):
    result = ragmeter.evaluate(data)
    with pytest.raises(AttributeError):
        result["ndcg@5"][0].value = 0.0
    with pytest.raises(TypeError):
        data.samples[0].relevance["x"] = 1.0


CORPUS_ORDER = {  # a fake retriever: returns the seed's hand-written list for each question
    "My R2 router died after 14 months. Is it still under warranty, and how do I get a replacement?":
        ["warranty-r2", "claim-steps", "exclusions", "warranty-r1", "returns-30d"],
}


def fake(question):
    return CORPUS_ORDER.get(question, ["led-power", "transfer"])


def test_evaluate_retriever_with_a_function(data):
    result = ragmeter.evaluate_retriever(fake, data, k=5, metrics=["recall"])
    assert result.values("recall@5")[0] == 1.0  # q1 now retrieves all three relevant chunks
    assert result.values("recall@5")[4] == 1.0  # q5: transfer found


def test_evaluate_retriever_duck_types_langchain_and_llamaindex(data):
    class LangChainLike:
        def invoke(self, question):
            return [SimpleNamespace(id=None, metadata={"id": cid}, page_content="t") for cid in fake(question)]

    class LlamaIndexLike:
        def retrieve(self, question):
            return [SimpleNamespace(node=SimpleNamespace(node_id=cid, text="t"), score=1.0) for cid in fake(question)]

    a = ragmeter.evaluate_retriever(LangChainLike(), data, k=5).means()
    b = ragmeter.evaluate_retriever(LlamaIndexLike(), data, k=5).means()
    c = ragmeter.evaluate_retriever(lambda q, k: fake(q)[:k], data, k=5).means()
    assert a == b == c


def test_evaluate_retriever_refuses_duplicates(data):
    with pytest.raises(InvalidInputError, match='q1.*returned chunk "a" twice'):
        ragmeter.evaluate_retriever(lambda q: ["a", "a"], data)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
def test_label_only_eval_loads_no_judge_ledger_ray_or_report_code(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": "?", "retrieved": ["a", "b"],
                                        "relevant": {"b": 1}}) + "\n" for i in range(3)))
    script = (
        "import sys\n"
        "from ragmeter.cli.main import run\n"
        f"sys.argv = ['ragmeter', 'eval', {str(data)!r}, '-m', 'ndcg@10,mrr@10', '--no-save',"
        " '--format', sys.argv[1]]\n"
        "try:\n    run()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('ragmeter.judges', 'ragmeter.ledger', 'ray',"
        " 'ragmeter.engine.distributed', 'ragmeter.evidence.planner', 'ragmeter.engine.judged_scoring',"
        " 'ragmeter.embeddings.backends', 'ragmeter.report.html', 'httpx')))\n"
        "print('LOADED', bad, file=sys.stderr)\n")
    for fmt in ("json", "table"):
        done = subprocess.run([sys.executable, "-c", script, fmt], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "LOADED []" in done.stderr, done.stderr


def q1():
    data = load_dataset(WARRANTY / "dataset.jsonl", corpus=WARRANTY / "corpus.jsonl")
    return [s for s in data if s.id == "q1"]


def test_metric_strings_lists_and_whole_list_k():
    path = WARRANTY / "dataset.jsonl"
    one = evaluate(path, "ndcg@5")
    assert one.metric_names == ["ndcg@5"] and one.summary("ndcg").mean == pytest.approx(0.628, abs=5e-4)
    both = evaluate(path, "precision@5, mrr,ndcg(discount='jk2002', base=2.0)@5")
    assert both.metric_names == ["precision@5", "reciprocal_rank@5", "ndcg(discount='jk2002')@5"]
    assert evaluate(path, ["mrr"]).means() == evaluate(path, "mrr").means() == {"reciprocal_rank@5": both.means()[
        "reciprocal_rank@5"]}
    # k=None: the whole list. q3's only relevant chunk is at rank 5: RR 1/5 whole, 0 at k=3
    assert evaluate(path, "mrr", k=None).outcome("mrr", "q3").value == 1 / 5
    assert evaluate(path, "mrr", k=3).outcome("mrr", "q3").value == 0.0
    with pytest.raises(ragmeter.InvalidParameterError, match="each item must be a metric name"):
        evaluate(path, [3])


def test_a_judge_spec_string(judged_env):
    r = evaluate(q1(), "faithfulness,context_recall", judge="openai:judge-model")
    assert r.summary("faithfulness").mean == pytest.approx(3 / 5)  # the seed: S, S, S, C, N
    assert r.summary("context_recall").mean == pytest.approx(4 / 5)
    assert r.judge_stats is not None and r.judge_stats["calls"] == judged_env.count > 0
    again = evaluate(q1(), "faithfulness", judge="openai:judge-model")  # the ledger in $RAGMETER_RUNS_DIR
    assert again.judge_stats["calls"] == 0 and again.summary("faithfulness").mean == pytest.approx(3 / 5)


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                            "ignore::ragmeter.core.errors.NothingRetrievedWarning")
@pytest.mark.parametrize("with_judge", [False, True])
def test_label_measures_alone_are_scored_without_a_loop_as_ascore_scores_them(with_judge: bool) -> None:
    """``evaluate_with`` skips the event loop for label measures alone; what it returns is what
    ``ascore`` returns for them (the same outcomes, fingerprints, no evidence, no judge stats)."""
    from ragmeter.core.aio import run_sync
    from ragmeter.engine.evaluate import ascore, evaluate_with, resolve_measures
    from ragmeter.evidence.sources import build_sources

    data = load_dataset(WARRANTY / "dataset.jsonl")
    measures = resolve_measures(["ndcg@5", "mrr@5", "recall@3", "hit_rate@5"], None)
    sources = build_sources(judge=SimpleNamespace(stats=None, session=None) if with_judge else None)
    quick = evaluate_with(data, measures, sources)
    looped = run_sync(lambda: ascore(data, measures, sources))
    assert quick.to_dict() == looped.to_dict()
    assert quick.evidence is None and quick.judge_stats is None
