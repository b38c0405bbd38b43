"""One call from settings to a recorded evaluation: ``ragmeter eval`` without the rendering.

:func:`run_evaluation` resolves the judge (``auto``), builds the judge and the embedder
through their factories, picks the engine (the local one in memory, ``block`` streaming,
or Ray), plans instead of calling on a dry run, and records the run directory (a new
one, or the one resumed). Everything it reads is in :class:`~ragmeter.core.settings.Settings`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.measure import Measure
from ragmeter.core.progress import Progress
from ragmeter.core.settings import AUTO_JUDGE, DEFAULTS, NO_JUDGE, InvalidSettingError, Settings
from ragmeter.engine.dry_run import needs_judge
from ragmeter.engine.evaluate import evaluate, resolve_measures
from ragmeter.io.dataset import Dataset, from_samples, load_dataset

if TYPE_CHECKING:  # a label-only run loads no judge, Ray, embedding or record code (start-up time),
    # and one that writes no run directory no run-file code
    from ragmeter.actions.criteria import CriteriaSet
    from ragmeter.judges.judge import Judge
    from ragmeter.metrics.criteria import Criterion
    from ragmeter.records.lookup import RecordLookup
    from ragmeter.runs.store import Run

#: Made from the judge (None for a run without one) on the local engine; receives the engine's
#: progress (``start``, ``advance``) for every stage: label metrics, embeddings, judge calls.
ProgressFactory = Callable[["Judge | None"], AbstractContextManager[Progress]]
STREAMABLE = (".jsonl", ".ndjson")


@dataclass(frozen=True)
class StreamedEvaluation:
    """What ``block`` streaming leaves in memory: the summary, not the samples."""

    summary: dict[str, dict]  # measure name -> mean, interval, coverage
    dataset: dict[str, Any]  # path, fingerprints, sample count
    measures: tuple[Measure, ...]
    block: int


@dataclass(frozen=True)
class EvaluationRun:
    """The outcome of :func:`run_evaluation`: exactly one of ``plan`` (dry run), ``result``
    (in memory, local or Ray) and ``streamed`` is set."""

    settings: Settings  # as run: ``auto`` resolved to a judge or ``none``
    run_path: Path | None  # the run directory written, if any
    result: EvaluationResult | None = None
    streamed: StreamedEvaluation | None = None
    plan: dict[str, Any] | None = None


def resolve_judge(settings: Settings, notify: Callable[[str], None] | None = None) -> Settings:
    """``auto``: the bundled local judge when a requested metric needs a judge and
    ``ragmeter[local]`` is installed (``notify`` is told), else no judge."""
    if settings.judge != AUTO_JUDGE:
        return settings
    spec = None
    if needs_judge(settings.metrics, settings.k, settings.view):  # else no judge code is imported
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


def _criteria(settings: Settings) -> dict[str, Criterion] | None:
    if not settings.criteria:
        return None
    from ragmeter.metrics.criteria import load_criteria

    return load_criteria(settings.criteria)


def _judge(settings: Settings) -> Judge | None:
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


def _check(settings: Settings) -> None:
    if settings.dataset is None:
        raise InvalidSettingError("dataset", "give a dataset file (or --resume RUN)")
    if settings.block is not None:
        if settings.only or not settings.dataset.lower().endswith(STREAMABLE):
            raise InvalidSettingError("block", "--block streams a JSONL dataset (without --only)")
        if settings.dry_run:
            raise InvalidSettingError("block", "a dry run loads the whole dataset: drop --block to plan it")
        if settings.engine != "local":
            raise InvalidSettingError("block", "--block streams on the local engine: drop --engine or --block")
    if settings.engine == "ray" and (settings.budget_tokens or settings.budget_usd is not None):
        raise InvalidSettingError("engine", "a judge budget is kept by one process: drop --budget/--budget-usd "
                                            "for --engine ray, or run on the local engine")


def run_evaluation(settings: Settings, *, resume: Run | None = None, progress: ProgressFactory | None = None,
                   notify: Callable[[str], None] | None = None) -> EvaluationRun:
    """Evaluate as ``settings`` say and record the run.

    ``resume``: a run directory to finish (its settings are in ``settings``: see
    :func:`ragmeter.runs.resume.resume_settings`); otherwise a new one is written when
    ``settings.save`` (and not on a dry run). ``progress``: made from the judge (or None) on the
    local engine (a terminal bar or plain lines: :func:`ragmeter.report.progress.progress_factory`).
    ``notify``: told what was chosen for
    the caller (the default judge).
    """
    _check(settings)
    if settings.dry_run:  # a planning judge: no client, no key, nothing written
        from ragmeter.runs.dry_run import plan_evaluation

        return plan_evaluation(settings, resumed=resume is not None, notify=notify)
    if resume is None:
        settings = resolve_judge(settings, notify)
    # built on every engine, so that a wrong judge or a missing key fails before any work
    # (Ray workers build their own from its description)
    judge = _judge(settings)
    criteria = _criteria(settings)
    actions = action_criteria(settings)
    resolve_measures(settings.metrics, settings.k, view=settings.view)  # a bad -m leaves no run directory
    if settings.block is not None and settings.dataset is not None:
        return _streamed(settings, settings.dataset, settings.block, judge, criteria, resume, actions)
    data = load_samples(settings)
    records = record_lookup(settings)
    if resume is not None:
        from ragmeter.runs.resume import check_fingerprint

        check_fingerprint(resume, data.fingerprint)
    # only now: bad input leaves no run directory behind
    run_path, setup = _recording(settings, resume, {"path": data.path and str(Path(data.path).resolve()),
                                                    "fingerprint": data.fingerprint})
    try:
        if settings.engine == "ray":
            from ragmeter.engine.distributed import evaluate_ray
            from ragmeter.judges.judge_factory import describe_judge

            result = evaluate_ray(data, settings.metrics, k=settings.k, view=settings.view,
                                  judge_spec=describe_judge(settings), ledger=settings.ledger_path,
                                  address=settings.address, concurrency=settings.concurrency,
                                  embedder=settings.embedder, criteria=criteria,
                                  records={"spec": settings.records, "timeout": settings.records_timeout}
                                  if settings.records else None, action_criteria=actions)
        else:
            embedder = _embedder(settings)
            saved = _saver(run_path, setup)
            with progress(judge) if progress is not None else nullcontext() as on_stage:
                result = evaluate(data, settings.metrics, k=settings.k, view=settings.view, judge=judge,
                                  criteria=criteria, embedder=embedder, progress=on_stage, before_judged=saved,
                                  records=records, action_criteria=actions)
        if run_path is not None and setup is not None:
            from ragmeter.runs.store import finish_run

            finish_run(run_path, setup, result)
    except BaseException as exc:
        if run_path is not None and setup is not None:
            from ragmeter.runs.store import mark_stopped

            mark_stopped(run_path, setup, exc)
            if notify is not None and not isinstance(exc, KeyboardInterrupt):
                notify(f"run stopped; what was scored is saved in {run_path} "
                       f"(`ragmeter show {run_path}`; finish it with `ragmeter eval --resume {run_path}`)")
        raise
    return EvaluationRun(settings, run_path, result=result)


def _embedder(settings: Settings) -> Any:
    """The embedder ``settings`` name; None for the bundled MiniLM, which the engine loads
    itself when a metric needs it (so a label-only run imports no embedding code)."""
    if settings.embedder == DEFAULTS.embedder:
        return None
    from ragmeter.embeddings.backends import embedder_for

    return embedder_for(settings)


def _saver(run_path: Path | None, setup: dict | None) -> Callable[[EvaluationResult], None] | None:
    """Saves the label and embedding results before the judged metrics start."""
    if run_path is None or setup is None:
        return None
    from ragmeter.runs.store import save_partial

    def save(partial: EvaluationResult) -> None:
        save_partial(run_path, setup, partial)

    return save


def _recording(settings: Settings, resume: Run | None,
               dataset: dict[str, Any] | None = None) -> tuple[Path | None, dict | None]:
    if resume is None and (not settings.save or settings.dry_run):
        return None, None
    from ragmeter.runs.resume import absolute_options
    from ragmeter.runs.store import check_writable, new_run_path, reopen_run, start_run

    if resume is not None:  # the options it finishes with (a new server URL, timeout) are recorded
        setup = {**resume.setup, "options": absolute_options(settings.stored())}
        return resume.path, (setup if settings.dry_run else reopen_run(resume.path, setup))
    check_writable(settings.runs_dir)  # before any scoring: an unwritable folder costs nothing
    path = new_run_path(settings.runs_dir, settings.name)
    return path, start_run(path, absolute_options(settings.stored()), dataset)


def _streamed(settings: Settings, path: str, block: int, judge: Judge | None,
              criteria: dict[str, Criterion] | None, resume: Run | None,
              actions: CriteriaSet | None = None) -> EvaluationRun:
    embedder = _embedder(settings)
    opened: dict[str, Any] = {"path": None, "setup": None}

    def open_run(dataset: dict[str, Any]) -> tuple[Path | None, dict | None]:
        if resume is not None:
            from ragmeter.runs.resume import check_fingerprint

            check_fingerprint(resume, dataset["fingerprint"])
        opened["path"], opened["setup"] = _recording(settings, resume, dataset)
        return opened["path"], opened["setup"]

    from ragmeter.runs.blockwise import evaluate_streaming

    try:
        summary, dataset = evaluate_streaming(path, settings.metrics, block=block, open_run=open_run,
                                              corpus=settings.corpus, k=settings.k, view=settings.view,
                                              judge=judge, criteria=criteria, embedder=embedder,
                                              records=record_lookup(settings), action_criteria=actions)
    except BaseException as exc:
        if opened["path"] is not None and opened["setup"] is not None:
            from ragmeter.runs.store import mark_stopped

            mark_stopped(opened["path"], opened["setup"], exc)
        raise
    run_path = opened["path"]
    measures = resolve_measures(settings.metrics, settings.k, view=settings.view)
    return EvaluationRun(settings, run_path, streamed=StreamedEvaluation(summary, dataset, measures, block))
