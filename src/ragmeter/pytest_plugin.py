"""ragmeter's pytest plugin (entry point ``pytest11``): the ``assert_metrics`` fixture."""

from __future__ import annotations

import pytest

from ragmeter.testing import assert_metrics as _assert_metrics


@pytest.fixture
def assert_metrics():
    """``assert_metrics("data.jsonl", {"faithfulness": 0.8, "recall@5": 0.7}, judge=...)``."""
    return _assert_metrics
