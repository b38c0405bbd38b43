"""Reading scores together: run comparison with paired tests, the release gate, correlation,
failure-point diagnosis, pairwise preference, turns (how far a judge agrees with people is
``ragmeter.trust``).

The per-metric summary (mean, coverage, bootstrap interval) is ``ragmeter.core.summary``;
its names are re-exported here for code that imported them from this package.
"""

from ragmeter.core.summary import MetricSummary, summarize

__all__ = ["MetricSummary", "summarize"]
