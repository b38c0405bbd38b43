"""Fixtures of the generation metrics' tests."""

from __future__ import annotations

import builtins

import pytest

from ragmeter.embeddings import minilm as minilm_module


@pytest.fixture
def without_onnxruntime(monkeypatch):
    """``import onnxruntime`` fails, as on a core install; the shared bundled embedder is dropped
    before and after, so neither a loaded instance nor this test's failure leaks."""
    real = builtins.__import__

    def no_onnx(name, *args, **kwargs):
        if name == "onnxruntime":
            raise ImportError(name=name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_onnx)
    minilm_module.bundled.cache_clear()
    yield
    minilm_module.bundled.cache_clear()
