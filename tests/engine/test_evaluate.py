"""The Python API: values, DataFrames, provenance, and live retrievers."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import ragmeter
from ragmeter import InvalidInputError


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
