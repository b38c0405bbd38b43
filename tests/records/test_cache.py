"""``records/cache.py``: only final answers are cached, and an age limit is kept."""

from __future__ import annotations

import time

from ragmeter.records import (
    CallableSource,
    Fact,
    MemoryLookupCache,
    RecordLookup,
    RecordValue,
    SqliteLookupCache,
    check_facts_sync,
)


def test_cache_keeps_final_answers_only(tmp_path):
    calls: list[tuple[str, str]] = []
    state = {"down": True}

    def lookup(entity, attribute):
        calls.append((entity, attribute))
        if entity == "ORD-1" and state["down"]:
            raise ConnectionError("down")
        return {"ORD-1": "shipped", "ORD-2": "processing"}.get(entity)

    cache = SqliteLookupCache(tmp_path / "ledger.sqlite")
    facts = [Fact("ORD-1", "status", "shipped"), Fact("ORD-2", "status", "processing"),
             Fact("ORD-3", "status", "shipped")]
    first = check_facts_sync(facts, RecordLookup(CallableSource(lookup, identity="fn"), cache=cache))
    assert [c.verdict for c in first] == ["cannot_verify", "pass", "cannot_verify"]
    assert len(cache) == 2  # the value and the "no record"; the failure is not stored
    state["down"] = False
    calls.clear()
    second = check_facts_sync(facts, RecordLookup(CallableSource(lookup, identity="fn"),
                                                  cache=SqliteLookupCache(tmp_path / "ledger.sqlite")))
    assert [c.verdict for c in second] == ["pass", "pass", "cannot_verify"]
    assert calls == [("ORD-1", "status")]  # only the failed lookup is asked again
    other = RecordLookup(CallableSource(lookup, identity="another source"), cache=cache)
    check_facts_sync(facts[:1], other)
    assert other.stats.asked == 1  # the key holds the source identity
    memory = MemoryLookupCache()
    check_facts_sync(facts, RecordLookup(CallableSource(lookup, identity="fn"), cache=memory))
    assert len(memory) == 3


def test_cache_age_limit(tmp_path):
    cache = SqliteLookupCache(tmp_path / "c.sqlite", max_age_s=0.05)
    cache.put(key="k", source="s", entity="e", attribute="a", outcome=RecordValue("x"))
    assert cache.get("k") is not None
    time.sleep(0.1)
    assert cache.get("k") is None
    cache.put(key="k", source="s", entity="e", attribute="a", outcome=RecordValue("y"))
    assert cache.get("k").outcome == RecordValue("y")
