"""Judged context metrics. Importing registers them."""

from ragmeter.metrics.context import judged  # noqa: F401
