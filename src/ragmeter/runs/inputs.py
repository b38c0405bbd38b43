"""What a run reads from its settings: the measures, the dataset (cut to ``--only``), the judge
(``auto`` resolved) and the description of its sources a Ray worker rebuilds them from (the
sources themselves are built by :func:`ragmeter.evidence.sources.build_sources`).

Used by the run driver (:mod:`ragmeter.runs.driver`) and the dry run
(:mod:`ragmeter.runs.dry_run`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ragmeter.core.measure import Measure
from ragmeter.core.settings import AUTO_JUDGE, NO_JUDGE, InvalidSettingError, Settings
from ragmeter.engine.call_plan import needs_judge
from ragmeter.engine.evaluate import measure_list, resolve_measures
from ragmeter.evidence.sources import Sources, SourcesDescription
from ragmeter.io.dataset import Dataset, from_samples, load_dataset

if TYPE_CHECKING:
    pass


def run_measures(settings: Settings) -> tuple[Measure, ...]:
    """The measures ``settings.metrics`` name at ``settings.k`` and ``settings.view``: parsed
    once per run, then passed down as measures."""
    return resolve_measures(measure_list(settings.metrics), settings.k, view=settings.view)


def with_judge_chosen(settings: Settings, *, resumed: bool = False,
                      notify: Callable[[str], None] | None = None) -> tuple[Settings, tuple[Measure, ...] | None]:
    """``auto`` resolved before a run or a dry run builds its sources: the settings with the judge
    chosen, and the measures if they were parsed to choose it (else None: parsed later, after the
    judge is built). ``resumed``: a stored run's settings, whose judge is resolved already."""
    if resumed or settings.judge != AUTO_JUDGE:
        return settings, None
    measures = run_measures(settings)  # auto turns on whether a measure is judged
    return resolve_judge(settings, measures, notify), measures


def resolve_judge(settings: Settings, measures: Sequence[Measure],
                  notify: Callable[[str], None] | None = None) -> Settings:
    """``auto``: the bundled offline judge when one of ``measures`` needs a judge and
    ``ragmeter[local]`` or ``ragmeter[embeddings]`` is installed (``notify`` is told), else no judge."""
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


def described(settings: Settings, sources: Sources) -> SourcesDescription:
    """What a Ray worker builds the run's sources from (the judge and the record source as the
    settings name them; the criteria as read here)."""
    from ragmeter.judges.judge_factory import describe_judge

    return SourcesDescription(judge=describe_judge(settings), embedder=settings.embedder,
                              records=settings.records or None, records_timeout=settings.records_timeout,
                              criteria=sources.criteria, action_criteria=sources.action_criteria)
