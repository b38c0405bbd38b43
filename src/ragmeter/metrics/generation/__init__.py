"""Judged generation metrics, read from the shared claim matrix. Importing registers them."""

from ragmeter.metrics.generation import answer, faithfulness, ragchecker  # noqa: F401
