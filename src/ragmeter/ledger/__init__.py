"""The judgment store."""

from ragmeter.ledger.sqlite import Entry, Ledger

__all__ = ["Ledger", "Entry"]
