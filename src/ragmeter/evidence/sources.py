"""Where a run's evidence comes from, as one value: the judge, the embedder, the record lookup,
the action criteria and the rubric criteria.

:func:`build_sources` is the one place a :class:`Sources` is made: from a run's settings (the
run driver, the dry run, ``--block`` streaming, ``watch``), from the keywords of ``evaluate``,
and in each Ray worker. The parts a caller holds already are given to it (the dry run's
planning judge, watch's judge on its own ledger, a worker's criteria as the driver read them);
it builds the rest from the settings. Built once at the entry and passed down whole, nothing
below the entry takes the five apart. A Ray worker cannot receive an open ledger, an HTTP
client or an MCP subprocess, so it receives a :class:`SourcesDescription` (picklable: specs and
settings, no key, no client) and rebuilds the same sources from it.

>>> build_sources().judge is None, SourcesDescription(records="records.jsonl").records
(True, 'records.jsonl')
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

from ragmeter.core.settings import DEFAULTS, Settings

if TYPE_CHECKING:  # named only: building sources loads what each one needs, when it is given
    from ragmeter.actions.criteria import CriteriaSet
    from ragmeter.embeddings.base import EmbedderLike
    from ragmeter.evidence.rubric_criteria import RubricCriterion
    from ragmeter.judges.judge import Judge
    from ragmeter.judges.transport import Limiter
    from ragmeter.ledger.sqlite import Ledger
    from ragmeter.records.lookup import RecordLookup

#: Why a judge's backend does not serve a prompt (``Backend.refuses``), or None when it does.
Refuses = Callable[[str], "str | None"]


class _Read(enum.Enum):
    FROM_SETTINGS = "from the settings"


#: A part of :func:`build_sources` not given: built from the settings.
FROM_SETTINGS = _Read.FROM_SETTINGS
_T = TypeVar("_T")
#: A part as :func:`build_sources` takes it: the part, None (none), or :data:`FROM_SETTINGS`.
Part: TypeAlias = _T | None | Literal[_Read.FROM_SETTINGS]


@dataclass(frozen=True)
class Sources:
    """The judge that answers the prompts; the embedder (None: the bundled MiniLM, loaded when
    a metric embeds); the lookup in the user's system of record; the criteria on the tool
    calls; the rubric criteria besides the built-in ones, by name."""

    judge: Judge | None = None
    embedder: EmbedderLike | None = None
    records: RecordLookup | None = None
    action_criteria: CriteriaSet | None = None
    criteria: Mapping[str, RubricCriterion] | None = None

    @property
    def refuses(self) -> Refuses | None:
        """The judge's ``refuses`` (None without a judge)."""
        return getattr(self.judge.backend, "refuses", None) if self.judge is not None else None

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
    criteria: Mapping[str, RubricCriterion] | None = None
    action_criteria: CriteriaSet | None = None

    def build(self, *, ledger: Ledger, limiter: Limiter | None = None, lookup_cache: str | None = None) -> Sources:
        """The sources this describes, built in this process (API keys come from its environment):
        the judge on ``ledger`` sharing ``limiter``; record lookups cached in the ledger file
        ``lookup_cache`` (its own table), if given."""
        judge = None
        if self.judge is not None:
            from ragmeter.judges.judge_factory import judge_from_description

            judge = judge_from_description(self.judge, ledger, limiter=limiter)
        embedder = None
        if self.embedder not in (None, DEFAULTS.embedder):  # the bundled one is loaded where a metric embeds
            from ragmeter.embeddings import make_embedder

            embedder = make_embedder(str(self.embedder), base_url=self.embedder_base_url)
        # the record lookup is built here: a subprocess or a client is not sent over the wire
        settings = DEFAULTS.replace(records=self.records, records_timeout=self.records_timeout)
        return build_sources(settings, judge=judge, embedder=embedder, records_cache=lookup_cache,
                             criteria=self.criteria, action_criteria=self.action_criteria)


def build_sources(settings: Settings = DEFAULTS, *, judge: Part[Judge] = FROM_SETTINGS,
                  embedder: Part[EmbedderLike] = FROM_SETTINGS, records: Part[RecordLookup] = FROM_SETTINGS,
                  criteria: Part[Mapping[str, RubricCriterion]] = FROM_SETTINGS,
                  action_criteria: Part[CriteriaSet] = FROM_SETTINGS, records_cache: str | None = None) -> Sources:
    """A run's sources: each part given as it is (None: none), each part not given built from
    ``settings``, and only when the settings name it (a label-only run imports no judge, record,
    action or embedding code):

    - ``judge``: :func:`~ragmeter.judges.judge_factory.make_judge` of ``settings.judge_spec``;
    - ``embedder``: the one ``settings.embedder`` names (None for the bundled MiniLM, which the
      engine loads itself when a metric embeds);
    - ``records``: the record source ``settings.records`` names, each lookup bounded by
      ``records_timeout``, cached in the SQLite file ``records_cache`` (its own table) if given;
    - ``criteria`` and ``action_criteria``: read from the files ``settings.criteria`` and
      ``settings.action_criteria`` name (JSON or YAML).

    >>> build_sources(Settings(judge="none"), criteria={}).criteria
    {}
    """
    return Sources(
        judge=_judge(settings) if judge is FROM_SETTINGS else judge,
        embedder=_embedder(settings) if embedder is FROM_SETTINGS else embedder,
        records=_records(settings, records_cache) if records is FROM_SETTINGS else records,
        criteria=_criteria(settings) if criteria is FROM_SETTINGS else criteria,
        action_criteria=_action_criteria(settings) if action_criteria is FROM_SETTINGS else action_criteria,
    )


def _judge(settings: Settings) -> Judge | None:
    if settings.judge_spec is None:
        return None
    from ragmeter.judges.judge_factory import make_judge

    return make_judge(settings.judge_spec, settings)


def _embedder(settings: Settings) -> EmbedderLike | None:
    if settings.embedder == DEFAULTS.embedder:
        return None
    from ragmeter.embeddings.backends import embedder_for

    return embedder_for(settings)


def _records(settings: Settings, cache: str | None) -> RecordLookup | None:
    if not settings.records:
        return None
    from ragmeter.records.cache import SqliteLookupCache
    from ragmeter.records.lookup import RecordLookup
    from ragmeter.records.spec import parse_source

    return RecordLookup(parse_source(settings.records, timeout_s=settings.records_timeout),
                        cache=SqliteLookupCache(cache) if cache else None, timeout_s=settings.records_timeout,
                        concurrency=settings.concurrency)


def _criteria(settings: Settings) -> dict[str, RubricCriterion] | None:
    if not settings.criteria:
        return None
    from ragmeter.evidence.rubric_criteria import load_rubric_criteria

    return load_rubric_criteria(settings.criteria)


def _action_criteria(settings: Settings) -> CriteriaSet | None:
    if not settings.action_criteria:
        return None
    from ragmeter.actions.criteria import load_action_criteria

    return load_action_criteria(settings.action_criteria)
