"""What every embedder offers: unit vectors for texts, an identity for provenance, and
(optionally) contextual token vectors for token-matching scores.

``encode(texts) -> float32 array (n, d)``, each row L2-normalised, so a cosine is a dot
product. ``identity`` names the model (and its file hash where there is one) and goes
into every embedding score's provenance: scores from two embedders are not comparable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


class Embedder:
    identity: dict = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def token_vectors(self, text: str) -> np.ndarray:
        """Unit vectors of the text's tokens (special tokens left out), shape (tokens, d)."""
        raise NotImplementedError(f"{self.identity.get('model', 'this embedder')} gives no token vectors")

    @property
    def has_tokens(self) -> bool:
        return type(self).token_vectors is not Embedder.token_vectors


class CallableEmbedder(Embedder):
    """Wraps a user's ``f(list[str]) -> vectors`` (any array-like of rows)."""

    def __init__(self, fn: Callable[[list[str]], Any], name: str | None = None) -> None:
        self.fn = fn
        self.identity = {"backend": "callable", "model": name or getattr(fn, "__qualname__", "callable")}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return unit_rows(np.asarray(self.fn(list(texts)), dtype=np.float64))


def unit_rows(v: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a zero row stays zero)."""
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, norms, out=np.zeros_like(v), where=norms > 0)


EmbedFn = Callable[[list[str]], Any]  # a user's function: texts -> one vector per text (any array-like of rows)
EmbedderLike = Embedder | EmbedFn  # what ``evaluate(embedder=...)`` takes


def as_embedder(obj: EmbedderLike | None) -> Embedder | None:
    if obj is None or isinstance(obj, Embedder):
        return obj
    if callable(obj):
        return CallableEmbedder(obj)
    raise TypeError(f"embedder must be an Embedder or a callable list[str] -> vectors, got {type(obj).__name__}")


class Memo(Embedder):
    """Remembers sentence vectors by text; ``warm(texts)`` encodes the unseen ones in one batch."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.identity = inner, inner.identity
        self._seen: dict[str, np.ndarray] = {}

    def warm(self, texts: Sequence[str]) -> None:
        new = list(dict.fromkeys(t for t in texts if t not in self._seen))
        if new:
            self._seen.update(zip(new, self.inner.encode(new)))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.warm(texts)
        return np.array([self._seen[t] for t in texts])

    @property
    def has_tokens(self) -> bool:
        return self.inner.has_tokens

    def token_vectors(self, text: str) -> np.ndarray:
        return self.inner.token_vectors(text)
