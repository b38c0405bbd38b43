"""Where a run's evidence comes from, as one value: the judge, the embedder, the record lookup,
the action criteria and the rubric criteria.

:class:`Sources` is built once at the entry (``evaluate(judge=..., embedder=..., criteria=...,
records=..., action_criteria=...)``, or the run driver from its settings) and passed down
whole; nothing below the entry takes the five apart. A Ray worker cannot receive an open
ledger, an HTTP client or an MCP subprocess, so it receives a :class:`SourcesDescription`
(picklable: specs and settings, no key, no client) and rebuilds the same sources from it.

>>> Sources().judge is None, SourcesDescription(records="records.jsonl").records
(True, 'records.jsonl')
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ragmeter.core.settings import DEFAULTS

if TYPE_CHECKING:  # named only: building sources loads what each one needs, when it is given
    from ragmeter.actions.criteria import CriteriaSet
    from ragmeter.embeddings.base import EmbedderLike
    from ragmeter.evidence.rubric_criteria import Criterion
    from ragmeter.judges.judge import Judge
    from ragmeter.judges.transport import Limiter
    from ragmeter.ledger.sqlite import Ledger
    from ragmeter.records.lookup import RecordLookup

#: Why a judge's backend does not serve a prompt (``Backend.refuses``), or None when it does.
Refuses = Callable[[str], "str | None"]


@dataclass(frozen=True)
class Sources:
    """The judge that answers the prompts; the embedder (None: the bundled MiniLM, loaded when
    a metric embeds); the lookup in the user's system of record; the criteria on the tool
    calls; the rubric criteria besides the built-in ones, by name."""

    judge: Judge | None = None
    embedder: EmbedderLike | None = None
    records: RecordLookup | None = None
    action_criteria: CriteriaSet | None = None
    criteria: Mapping[str, Criterion] | None = None

    @property
    def refuses(self) -> Refuses | None:
        """The judge's ``refuses`` (None without a judge)."""
        return getattr(self.judge.backend, "refuses", None) if self.judge is not None else None

    def replace(self, **changes: Any) -> Sources:
        return replace(self, **changes)

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[Sources]:
        """The record lookup prepared (an MCP server started, a client opened) for the work
        inside, and closed after it, whatever happens."""
        try:
            if self.records is not None:
                await self.records.prepare()
            yield self
        finally:
            if self.records is not None:
                await self.records.aclose()


@dataclass(frozen=True)
class SourcesDescription:
    """Sources as a Ray task receives them. ``judge``: a
    :func:`~ragmeter.judges.judge_factory.describe_judge` description; ``embedder``: a
    :func:`~ragmeter.embeddings.make_embedder` spec (None or ``minilm``: the bundled one);
    ``records``: a :func:`~ragmeter.records.parse_source` string, each lookup bounded by
    ``records_timeout`` seconds; the criteria as :class:`Sources` holds them."""

    judge: Mapping[str, Any] | None = None
    embedder: str | None = None
    embedder_base_url: str | None = None
    records: str | None = None
    records_timeout: float = DEFAULTS.records_timeout
    criteria: Mapping[str, Criterion] | None = None
    action_criteria: CriteriaSet | None = None

    def build(self, *, ledger: Ledger, limiter: Limiter | None = None, lookup_cache: str | None = None) -> Sources:
        """The sources this describes, built in this process (API keys come from its environment):
        the judge on ``ledger`` sharing ``limiter``; record lookups cached in the ledger file
        ``lookup_cache`` (its own table), if given."""
        judge = None
        if self.judge is not None:
            from ragmeter.judges.judge_factory import judge_from_description

            judge = judge_from_description(self.judge, ledger, limiter=limiter)
        records = None
        if self.records is not None:  # built here: a subprocess or a client is not sent over the wire
            from ragmeter.records.cache import SqliteLookupCache
            from ragmeter.records.lookup import RecordLookup
            from ragmeter.records.spec import parse_source

            records = RecordLookup(parse_source(self.records, timeout_s=self.records_timeout),
                                   cache=SqliteLookupCache(lookup_cache) if lookup_cache else None,
                                   timeout_s=self.records_timeout)
        embedder = None
        if self.embedder not in (None, DEFAULTS.embedder):  # the bundled one is loaded where a metric embeds
            from ragmeter.embeddings import make_embedder

            embedder = make_embedder(str(self.embedder), base_url=self.embedder_base_url)
        return Sources(judge=judge, embedder=embedder, records=records, action_criteria=self.action_criteria,
                       criteria=self.criteria)
