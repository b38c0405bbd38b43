"""Records: read-only lookups in the user's system of record, and facts checked against them.

>>> from ragmeter.records import Fact, RecordLookup, check_facts_sync, parse_source
>>> lookup = RecordLookup(parse_source("examples/warranty/records.jsonl"))  # doctest: +SKIP
>>> check_facts_sync([Fact("ORD-1042", "status", "Shipped")], lookup)      # doctest: +SKIP

Importing this package loads no HTTP client and no MCP SDK: each source imports what it
needs when it is built (``HttpSource``: httpx; ``McpSource``: ``mcp``, from the
``ragmeter[records]`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_facade

__getattr__, __dir__, __all__ = lazy_facade(__name__)

if TYPE_CHECKING:  # the public names, each imported from its home on first use
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
    from ragmeter.records.table_source import TableSource
    from ragmeter.records.types import (
        CannotVerify,
        LookupOutcome,
        RecordSource,
        RecordValue,
    )
    from ragmeter.records.verdicts import VerdictCounts, count
