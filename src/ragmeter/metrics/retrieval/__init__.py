"""Label-based retrieval metrics, vectorized over all queries. Importing registers them."""

from ragmeter.metrics.retrieval import ndcg, rank_based, set_based  # noqa: F401  (registration)
from ragmeter.metrics.retrieval.batch import RankedBatch

__all__ = ["RankedBatch"]
