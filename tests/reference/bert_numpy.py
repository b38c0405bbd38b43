"""An independent fp32 reference for the bundled embedder: BERT (Devlin et al. 2019) written
out in numpy from the published all-MiniLM-L6-v2 safetensors weights (6 layers, 384 wide,
12 heads, GELU-erf, post-LayerNorm), with sentence-transformers' mean pooling. Shares no code
with ragmeter's ONNX path except the tokenizer file."""

from __future__ import annotations

import math

import numpy as np

HEADS, EPS = 12, 1e-12


def _layer_norm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + EPS) * w + b


def _gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def _dense(w, prefix, x):
    return x @ w[prefix + ".weight"].T + w[prefix + ".bias"]


def embed(weights: dict, ids: list[int]) -> np.ndarray:
    """Unit sentence vector of one tokenized text (no padding, so no mask is needed)."""
    w = {k: v.astype(np.float64) for k, v in weights.items() if k != "embeddings.position_ids"}
    n = len(ids)
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    d = x.shape[1] // HEADS
    for i in range(6):
        p = f"encoder.layer.{i}."
        q, k, v = (_dense(w, p + f"attention.self.{m}", x).reshape(n, HEADS, d).transpose(1, 0, 2)
                   for m in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        ctx = (scores / scores.sum(-1, keepdims=True) @ v).transpose(1, 0, 2).reshape(n, -1)
        x = _layer_norm(x + _dense(w, p + "attention.output.dense", ctx),
                        w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        h = _dense(w, p + "output.dense", _gelu(_dense(w, p + "intermediate.dense", x)))
        x = _layer_norm(x + h, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    v = x.mean(0)
    return v / np.linalg.norm(v)
