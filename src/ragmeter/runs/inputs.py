"""What a run reads from its settings: the dataset (cut to ``--only``), the judge (``auto``
resolved), and the sources of its evidence (the judge, rubric criteria, record lookup, action
criteria, embedder), each built only when the settings name it, so that a label-only run
imports no judge, record or embedding code.

Used by the run driver (:mod:`ragmeter.runs.driver`) and the dry run
(:mod:`ragmeter.runs.dry_run`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.core.measure import Measure
from ragmeter.core.settings import AUTO_JUDGE, DEFAULTS, NO_JUDGE, InvalidSettingError, Settings
from ragmeter.engine.call_plan import needs_judge
from ragmeter.engine.evaluate import measure_list, resolve_measures
from ragmeter.evidence.sources import Sources, SourcesDescription
from ragmeter.io.dataset import Dataset, from_samples, load_dataset

if TYPE_CHECKING:
    from ragmeter.actions.criteria import CriteriaSet
    from ragmeter.evidence.rubric_criteria import Criterion
    from ragmeter.judges.judge import Judge
    from ragmeter.records.lookup import RecordLookup


def run_measures(settings: Settings) -> tuple[Measure, ...]:
    """The measures ``settings.metrics`` name at ``settings.k`` and ``settings.view``: parsed
    once per run, then passed down as measures."""
    return resolve_measures(measure_list(settings.metrics), settings.k, view=settings.view)


def resolve_judge(settings: Settings, measures: Sequence[Measure],
                  notify: Callable[[str], None] | None = None) -> Settings:
    """``auto``: the bundled local judge when one of ``measures`` needs a judge and
    ``ragmeter[local]`` is installed (``notify`` is told), else no judge."""
    if settings.judge != AUTO_JUDGE:
        return settings
    spec = None
    if needs_judge(measures):  # else no judge code is imported
        from ragmeter.judges.judge_factory import default_judge

        spec = default_judge()
    if spec is not None and notify is not None:
        notify("no --judge given: using the bundled local judge (offline)")
    return settings.replace(judge=spec or NO_JUDGE)


def load_samples(settings: Settings) -> Dataset:
    """The dataset with its corpus, cut to ``settings.only`` (every id must exist)."""
    if settings.dataset is None:
        raise InvalidSettingError("dataset", "give a dataset file (or --resume RUN)")
    data = load_dataset(settings.dataset, corpus=settings.corpus)
    if settings.only:  # (samples read: the cut is rare, and made of them)
        known = {s.id for s in data.samples}
        missing = [w for w in settings.only if w not in known]
        if missing:
            raise InvalidSettingError("only", f"no sample with id {', '.join(map(repr, missing))}")
        data = from_samples([s for s in data.samples if s.id in set(settings.only)], path=data.path)
    return data


def rubric_criteria(settings: Settings) -> dict[str, Criterion] | None:
    """The rubric criteria file ``settings.criteria`` (JSON or YAML), or None."""
    if not settings.criteria:
        return None
    from ragmeter.evidence.rubric_criteria import load_criteria

    return load_criteria(settings.criteria)


def run_judge(settings: Settings) -> Judge | None:
    """The judge ``settings`` name (None for none: no judge code is imported)."""
    if settings.judge_spec is None:
        return None
    from ragmeter.judges.judge_factory import make_judge

    return make_judge(settings.judge_spec, settings)


def record_lookup(settings: Settings) -> RecordLookup | None:
    """The record source ``settings.records`` names (``parse_source``), bounded by
    ``records_timeout`` per lookup and cached in the run's ledger file (its own table), or None."""
    if not settings.records:
        return None
    from ragmeter.records.cache import SqliteLookupCache
    from ragmeter.records.lookup import RecordLookup
    from ragmeter.records.spec import parse_source

    source = parse_source(settings.records, timeout_s=settings.records_timeout)
    return RecordLookup(source, cache=SqliteLookupCache(settings.ledger_path), timeout_s=settings.records_timeout,
                        concurrency=settings.concurrency)


def action_criteria(settings: Settings) -> CriteriaSet | None:
    """The action criteria file ``settings.action_criteria`` (JSON or YAML), or None."""
    if not settings.action_criteria:
        return None
    from ragmeter.actions.criteria import load_criteria as load_action_criteria

    return load_action_criteria(settings.action_criteria)


def described(settings: Settings, sources: Sources) -> SourcesDescription:
    """What a Ray worker builds the run's sources from (the judge and the record source as the
    settings name them; the criteria as read here)."""
    from ragmeter.judges.judge_factory import describe_judge

    return SourcesDescription(judge=describe_judge(settings), embedder=settings.embedder,
                              records=settings.records or None, records_timeout=settings.records_timeout,
                              criteria=sources.criteria, action_criteria=sources.action_criteria)


def embedder(settings: Settings) -> Any:
    """The embedder ``settings`` name; None for the bundled MiniLM, which the engine loads
    itself when a metric needs it (so a label-only run imports no embedding code)."""
    if settings.embedder == DEFAULTS.embedder:
        return None
    from ragmeter.embeddings.backends import embedder_for

    return embedder_for(settings)


def uncached_record_lookup(settings: Settings) -> RecordLookup | None:
    """The record source ``settings.records`` names, without the cache file a run keeps."""
    if not settings.records:
        return None
    from ragmeter.records.lookup import RecordLookup
    from ragmeter.records.spec import parse_source

    source = parse_source(settings.records, timeout_s=settings.records_timeout)
    return RecordLookup(source, timeout_s=settings.records_timeout, concurrency=settings.concurrency)
