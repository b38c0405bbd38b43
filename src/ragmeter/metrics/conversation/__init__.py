"""Conversation metrics. Importing registers them."""

from ragmeter.metrics.conversation import standalone  # noqa: F401
