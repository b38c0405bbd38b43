"""The judgment store."""

from ragmeter.ledger.sqlite import Entry, LayeredLedger, Ledger

__all__ = ["Ledger", "LayeredLedger", "Entry"]
