"""ragmeter's pytest plugin (entry point ``pytest11``): the ``assert_metrics`` and
``assert_sample`` fixtures (one test per sample: :mod:`ragmeter.testing`)."""

from __future__ import annotations

import pytest

from ragmeter.testing import assert_metrics as _assert_metrics
from ragmeter.testing import assert_sample as _assert_sample


@pytest.fixture
def assert_metrics():
    """``assert_metrics("data.jsonl", {"faithfulness": 0.8, "recall@5": 0.7}, judge=...)``."""
    return _assert_metrics


@pytest.fixture
def assert_sample():
    """``assert_sample(result, "q1", {"faithfulness": 0.8})``: one sample's values against the bars."""
    return _assert_sample
