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
    from ragmeter.actions import load_action_criteria

    criteria = load_action_criteria(warranty / "criteria.yaml")
    description = SourcesDescription(judge={"scripted": "tests.live_judge:scripted"},
                                     records=str(warranty / "records.jsonl"), records_timeout=3.0,
                                     action_criteria=criteria)
    sent = pickle.loads(pickle.dumps(description))
    built = sent.build(ledger=Ledger(":memory:"), lookup_cache=str(tmp_path / "ledger.sqlite"))
    assert built.judge is not None and built.judge.backend.name == "scripted"
    assert built.records is not None and built.records.timeout_s == 3.0 and built.records.cache is not None
    assert built.action_criteria == criteria and built.embedder is None
    assert SourcesDescription().build(ledger=Ledger(":memory:")) == Sources()


def test_each_part_not_given_is_built_from_the_settings(warranty, tmp_path, monkeypatch):
    """The run, the dry run, blocks, watch and Ray workers build their sources here: what the
    settings name is built (the judge, the criteria of both kinds, the record lookup bounded and
    cached as asked); what a caller gives is kept as it is, None included."""
    from ragmeter.core.settings import Settings
    from ragmeter.evidence.sources import build_sources

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    crit = tmp_path / "crit.json"
    crit.write_text('{"criteria": [{"name": "tone", "description": "Is it polite?", "scale": [0, 10]}]}')
    settings = Settings(judge="openai:m", ledger=str(tmp_path / "l.sqlite"), criteria=str(crit),
                        action_criteria=str(warranty / "criteria.yaml"), records=str(warranty / "records.jsonl"),
                        records_timeout=3.0, concurrency=2)
    built = build_sources(settings, records_cache=str(tmp_path / "l.sqlite"))
    assert built.judge is not None and (built.judge.backend.name, built.judge.backend.model) == ("openai", "m")
    assert list(built.criteria or {}) == ["tone"] and built.action_criteria is not None
    assert built.records is not None and (built.records.timeout_s, built.records.concurrency) == (3.0, 2)
    assert built.records.cache is not None and built.embedder is None  # the bundled one: loaded where used
    assert build_sources(settings, records_cache=None).records.cache is None
    given = build_sources(settings, judge=None, criteria={}, records=None, action_criteria=None, embedder=None)
    assert given == Sources(criteria={})


def test_sources_are_constructed_in_one_function():
    """``Sources(`` appears in ``build_sources`` only: the copies that drifted apart (the dry
    run's had no rubric criteria) cannot come back."""
    import ast
    from pathlib import Path

    import ragmeter

    found = []
    for path in sorted(Path(ragmeter.__file__).parent.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] + [tree]:
            body = function.body if function is not tree else [n for n in tree.body if not isinstance(
                n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
            for node in [c for b in body for c in ast.walk(b)]:
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Sources":
                    found.append(f"{path.name}:{getattr(function, 'name', '<module>')}")
    assert sorted(set(found)) == ["sources.py:build_sources"], found
