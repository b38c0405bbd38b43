"""Records: read-only lookups in the user's system of record, and facts checked against them.

>>> from ragmeter.records import Fact, RecordLookup, check_facts_sync, parse_source
>>> lookup = RecordLookup(parse_source("examples/warranty/records.jsonl"))  # doctest: +SKIP
>>> check_facts_sync([Fact("ORD-1042", "status", "Shipped")], lookup)      # doctest: +SKIP

Importing this package loads no HTTP client and no MCP SDK: each source imports what it
needs when it is built (``HttpSource``: httpx; ``McpSource``: ``mcp``, from the
``ragmeter[records]`` extra).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_HOMES = {
    "RecordValue": "types", "CannotVerify": "types", "RecordSource": "types", "LookupOutcome": "types",
    "TableSource": "table", "CallableSource": "callable_source", "HttpSource": "http_source",
    "McpSource": "mcp_source", "parse_source": "spec",
    "RecordLookup": "lookup", "LookupStats": "lookup",
    "LookupCache": "cache", "MemoryLookupCache": "cache", "SqliteLookupCache": "cache", "lookup_key": "cache",
    "compare": "normalise", "Comparison": "normalise", "read_quantity": "quantities", "read_date": "dates",
    "Fact": "facts", "FactCheck": "facts", "judge_fact": "facts", "check_facts": "facts",
    "check_facts_sync": "facts", "record_accuracy": "facts", "verification_coverage": "facts",
    "fact_counts": "facts",
    "VerdictCounts": "verdicts", "count": "verdicts",
    "FACTS_SCHEMA": "extraction", "fact_inputs": "extraction", "parse_facts": "extraction",
    "StaleChunk": "stale", "find_stale_chunks": "stale",
}

__all__ = [
    "FACTS_SCHEMA",
    "CallableSource",
    "CannotVerify",
    "Comparison",
    "Fact",
    "FactCheck",
    "HttpSource",
    "LookupCache",
    "LookupOutcome",
    "LookupStats",
    "McpSource",
    "MemoryLookupCache",
    "RecordLookup",
    "RecordSource",
    "RecordValue",
    "SqliteLookupCache",
    "StaleChunk",
    "TableSource",
    "VerdictCounts",
    "check_facts",
    "check_facts_sync",
    "compare",
    "count",
    "fact_counts",
    "fact_inputs",
    "find_stale_chunks",
    "judge_fact",
    "lookup_key",
    "parse_facts",
    "parse_source",
    "read_date",
    "read_quantity",
    "record_accuracy",
    "verification_coverage",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ragmeter.records' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ragmeter.records.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from ragmeter.records.cache import (
        LookupCache,
        MemoryLookupCache,
        SqliteLookupCache,
        lookup_key,
    )
    from ragmeter.records.callable_source import CallableSource
    from ragmeter.records.dates import read_date
    from ragmeter.records.extraction import FACTS_SCHEMA, fact_inputs, parse_facts
    from ragmeter.records.facts import (
        Fact,
        FactCheck,
        check_facts,
        check_facts_sync,
        fact_counts,
        judge_fact,
        record_accuracy,
        verification_coverage,
    )
    from ragmeter.records.http_source import HttpSource
    from ragmeter.records.lookup import LookupStats, RecordLookup
    from ragmeter.records.mcp_source import McpSource
    from ragmeter.records.normalise import Comparison, compare
    from ragmeter.records.quantities import read_quantity
    from ragmeter.records.spec import parse_source
    from ragmeter.records.stale import StaleChunk, find_stale_chunks
    from ragmeter.records.table import TableSource
    from ragmeter.records.types import (
        CannotVerify,
        LookupOutcome,
        RecordSource,
        RecordValue,
    )
    from ragmeter.records.verdicts import VerdictCounts, count
