"""Reading scores together: aggregation with coverage."""

from ragmeter.analysis.aggregate import MetricSummary, summarize

__all__ = ["MetricSummary", "summarize"]
