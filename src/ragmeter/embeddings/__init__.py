"""Sentence and token embeddings: the bundled all-MiniLM-L6-v2 (ONNX, offline) by default."""

from ragmeter.embeddings.backends import OpenAIEmbedder, SentenceTransformerEmbedder, embedder_for, make_embedder
from ragmeter.embeddings.base import CallableEmbedder, Embedder, as_embedder
from ragmeter.embeddings.minilm import EmbedderUnavailable, MiniLM

__all__ = ["CallableEmbedder", "Embedder", "EmbedderUnavailable", "MiniLM", "OpenAIEmbedder",
           "SentenceTransformerEmbedder", "as_embedder", "embedder_for", "make_embedder"]
