"""``ragmeter.metrics.generation.similarity``: Embedding metrics: no judge, only an embedding model
(the bundled MiniLM by default)."""

from __future__ import annotations

import numpy as np
import pytest

import ragmeter
from ragmeter.core.sample import Sample
from ragmeter.embeddings import MiniLM
from ragmeter.metrics.generation.similarity import precision_recall_f1


@pytest.fixture(scope="module")
def minilm():
    return MiniLM(threads=1)


def test_greedy_matching_formula():
    x = np.eye(3)[:2]                      # candidate tokens e1, e2
    y = np.array([[1.0, 0, 0], [0, 0, 1.0]])  # reference tokens e1, e3
    p, r, f = precision_recall_f1(x, y)
    assert (p, r) == ((1 + 0) / 2, (1 + 0) / 2) and f == 2 * 0.5 * 0.5 / (0.5 + 0.5)


def _sample(answer, reference):
    return Sample(id="s", question="q", retrieved=(), answer=answer, reference=reference)


def test_semantic_similarity_and_token_match_on_the_seed(warranty):
    r = ragmeter.evaluate(ragmeter.load_dataset(warranty / "dataset.jsonl"),
                          ["semantic_similarity", "token_match", "token_match(mode='precision')"])
    q1 = {m: r.outcome(m, "q1") for m in ("semantic_similarity", "token_match", "token_match(mode='precision')")}
    assert 0.7 < q1["semantic_similarity"].value < 0.95
    assert 0.6 < q1["token_match(mode='precision')"].value < 1.0
    prov = q1["token_match"].provenance.as_dict()
    assert prov["embedder"]["model"] == "all-MiniLM-L6-v2 (int8 ONNX)" and prov["embedder"]["sha256"]
    q2 = r.outcome("semantic_similarity", "q2")  # no answer: not computed, with the reason, out of the mean
    assert q2.status == "not_computed" and "no answer" in q2.reason


def test_identical_texts_score_one(minilm):
    s = _sample("The R2 has a 24-month warranty.", "The R2 has a 24-month warranty.")
    r = ragmeter.evaluate([s], ["semantic_similarity", "token_match"], embedder=minilm)
    assert r.outcome("semantic_similarity", "s").value == pytest.approx(1.0, abs=1e-6)
    assert r.outcome("token_match", "s").value == pytest.approx(1.0, abs=1e-6)


def test_missing_runtime_makes_embedding_metrics_not_computed(without_onnxruntime):
    r = ragmeter.evaluate([_sample("a", "b")], ["semantic_similarity"])
    o = r.outcome("semantic_similarity", "s")
    assert o.status == "not_computed" and "pip install onnxruntime" in o.reason
