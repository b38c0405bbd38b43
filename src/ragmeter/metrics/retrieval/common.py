"""What every label metric shares: the relevance threshold and view parameters, and rel_i."""

from __future__ import annotations

import numpy as np

from ragmeter.core.measure import Measure, Param
from ragmeter.metrics.batch import RankedBatch

VIEW = Param(str, "retrieved", choices=("retrieved", "context"),
             doc="rank what the retriever returned, or what reached the prompt")
REL = Param(float, 1.0, doc="a chunk is relevant when its grade >= rel")


def relevant(batch: RankedBatch, measure: Measure) -> np.ndarray:
    """rel_i over the top k: the chunk at rank i has grade >= rel (False past a list's end)."""
    return batch.cut(measure.k) >= measure.params["rel"]
