"""Judged context metrics. Importing registers them."""

from ragmeter.metrics.context import judged_context  # noqa: F401
