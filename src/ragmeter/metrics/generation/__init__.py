"""Judged generation metrics, read from the shared claim matrix. Importing registers them."""

from ragmeter.metrics.generation import (  # noqa: F401
    answer,
    citations,
    faithfulness,
    groundedness,
    kprecision,
    ragchecker,
    rubric,
    similarity,
)
