"""Judged generation metrics, read from the shared claim matrix. Importing registers them."""

from ragmeter.metrics.generation import answer, citations, faithfulness, ragchecker, rubric, similarity  # noqa: F401
