"""One Sources value: built once, opened around the work after the judge, and rebuilt in
another process from its description."""

from __future__ import annotations

import asyncio
import pickle

import pytest

from ragmeter.evidence.sources import Sources, SourcesDescription
from ragmeter.ledger import Ledger


class _Lookup:
    """A record lookup that says when it is prepared and closed."""

    def __init__(self) -> None:
        self.events: list[str] = []

    async def prepare(self) -> None:
        self.events.append("prepare")

    async def aclose(self) -> None:
        self.events.append("close")


def test_opened_prepares_the_record_lookup_and_closes_it_even_on_error():
    lookup = _Lookup()
    sources = Sources(records=lookup)  # type: ignore[arg-type]

    async def failing() -> None:
        async with sources.opened():
            lookup.events.append("work")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        asyncio.run(failing())
    assert lookup.events == ["prepare", "work", "close"]


def test_a_description_travels_and_builds_the_same_sources(warranty, tmp_path):
    """What a Ray worker receives pickles (no client, no key, no open file) and builds a judge,
    a record lookup cached in the given ledger file, and keeps the criteria."""
    from ragmeter.actions import load_criteria

    criteria = load_criteria(warranty / "criteria.yaml")
    description = SourcesDescription(judge={"scripted": "tests.live_judge:scripted"},
                                     records=str(warranty / "records.jsonl"), records_timeout=3.0,
                                     action_criteria=criteria)
    sent = pickle.loads(pickle.dumps(description))
    built = sent.build(ledger=Ledger(":memory:"), lookup_cache=str(tmp_path / "ledger.sqlite"))
    assert built.judge is not None and built.judge.backend.name == "scripted"
    assert built.records is not None and built.records.timeout_s == 3.0 and built.records.cache is not None
    assert built.action_criteria == criteria and built.embedder is None
    assert SourcesDescription().build(ledger=Ledger(":memory:")) == Sources()
