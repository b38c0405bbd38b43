"""What every label metric shares: the relevance threshold and view parameters, and its result type."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragmeter.metrics.spec import Param

VIEW = Param(str, "retrieved", choices=("retrieved", "context"),
             doc="rank what the retriever returned, or what reached the prompt")
REL = Param(float, 1.0, doc="a chunk is relevant when its grade >= rel")

NO_RELEVANT = "no relevant chunk labeled"


@dataclass(frozen=True)
class Computed:
    """Per-query values, and which queries the metric is undefined for (with the reason)."""

    values: np.ndarray
    undefined: np.ndarray
    reason: str = NO_RELEVANT
