"""Label-based retrieval metrics, vectorized over all queries. Importing registers them."""

from ragmeter.metrics.batch import RankedBatch
from ragmeter.metrics.retrieval import ndcg, rank_based, set_based  # noqa: F401  (registration)

__all__ = ["RankedBatch"]
