"""Metrics beyond the context: stated facts against the system of record, and the run's tool
calls against criteria. Importing registers them."""

from ragmeter.metrics.beyond import actions, records  # noqa: F401  (registration)
