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
from typing import IO, TYPE_CHECKING, Any

from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.measure import Measure
from ragmeter.core.progress import Progress
from ragmeter.core.settings import InvalidSettingError, Settings
from ragmeter.engine.evaluate import evaluate_with
from ragmeter.evidence.sources import FROM_SETTINGS, Sources, build_sources
from ragmeter.runs.inputs import described, load_samples, run_measures, with_judge_chosen

if TYPE_CHECKING:  # a label-only run loads no judge, Ray, embedding or record code (start-up time),
    # and one that writes no run directory no run-file code
    from ragmeter.judges.judge import Judge
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
        from ragmeter.runs.dry_run import plan_evaluation  # it loads the judges' code: a dry run only

        planned, plan = plan_evaluation(settings, resumed=resume is not None, notify=notify)
        return EvaluationRun(planned, None, plan=plan)
    settings, measures = with_judge_chosen(settings, resumed=resume is not None, notify=notify)
    # built on every engine, so that a wrong judge, a missing key or a bad source fails before any
    # work (Ray workers build their own from its description, the embedder included)
    sources = build_sources(settings, records_cache=settings.ledger_path,
                            embedder=None if settings.engine == "ray" else FROM_SETTINGS)
    if resume is not None and sources.judge is not None and sources.judge.budget is not None:
        # the budget holds across resumes: what the run spent before counts against it
        sources.judge.budget.spent_in, sources.judge.budget.spent_out = spent_before(resume.setup)
    measures = measures or run_measures(settings)  # a bad -m leaves no run directory
    if settings.block is not None and settings.dataset is not None:
        judge = sources.judge
        with judge.session() if judge is not None else nullcontext():  # one session for every block
            return _streamed(settings, settings.dataset, settings.block, measures, sources, resume, notify)
    data = load_samples(settings)
    if sources.action_criteria is not None:
        from ragmeter.actions.criteria import warn_unknown_cases

        warn_unknown_cases(sources.action_criteria, (s.id for s in data.samples), notify)
    if resume is not None:
        from ragmeter.runs.resume import check_fingerprint

        check_fingerprint(resume, data.fingerprint)
    # only now: bad input leaves no run directory behind
    run_path, setup, lock = _recording(settings, resume, {"path": data.path and str(Path(data.path).resolve()),
                                                          "fingerprint": data.fingerprint})
    try:
        if settings.engine == "ray":
            from ragmeter.engine.distributed import evaluate_ray

            result = evaluate_ray(data, measures, k=settings.k,
                                  sources=described(settings, sources), ledger=settings.ledger_path,
                                  address=settings.address, concurrency=settings.concurrency)
        else:
            saved = _saver(run_path, setup)
            with progress(sources.judge) if progress is not None else nullcontext() as on_stage:
                result = evaluate_with(data, measures, sources, progress=on_stage, before_judged=saved)
        if run_path is not None and setup is not None:
            from ragmeter.runs.store import finish_run

            finish_run(run_path, {**setup, **_spent(setup, sources.judge)}, result)
    except BaseException as exc:
        if run_path is not None and setup is not None:
            _stopped(run_path, setup, exc, sources.judge, notify)
        raise
    finally:
        if lock is not None:
            lock.close()
    return EvaluationRun(settings, run_path, result=result)


def _stopped(run_path: Path, setup: dict, exc: BaseException, judge: Judge | None,
             notify: Callable[[str], None] | None) -> None:
    """Record why the run stopped (and what its judge spent), and say how to go on."""
    from ragmeter.judges.budget import BudgetExceeded
    from ragmeter.runs.store import mark_stopped

    status = mark_stopped(run_path, setup, exc, extra=_spent(setup, judge))
    if notify is not None and status == "interrupted" and not isinstance(exc, KeyboardInterrupt):
        larger = " --budget N (or --budget-usd) with a larger cap" if isinstance(exc, BudgetExceeded) else ""
        notify(f"run stopped; what was scored is saved in {run_path} "
               f"(`ragmeter show {run_path}`; finish it with `ragmeter eval --resume {run_path}{larger}`)")
    elif notify is not None and status == "failed":
        notify(f"run failed on its input; what was scored is saved in {run_path} (fix the data and start a "
               f"new run: the judgments already made are in the ledger)")


def _spent(setup: dict, judge: Judge | None) -> dict:
    """``{"spent": {input_tokens, output_tokens}}``: what the run's judge calls cost, over every
    invocation of the run (the budget of a resumed run counts it); empty without a judge."""
    if judge is None:
        return {}
    before = spent_before(setup)
    return {"spent": {"input_tokens": before[0] + judge.stats.input_tokens,
                      "output_tokens": before[1] + judge.stats.output_tokens}}


def spent_before(setup: dict | None) -> tuple[int, int]:
    """(input, output) tokens a run's earlier invocations spent, as its setup records them."""
    spent = (setup or {}).get("spent")
    if not isinstance(spent, dict):
        return 0, 0
    counts = [spent.get("input_tokens"), spent.get("output_tokens")]
    return tuple(int(c) if isinstance(c, int) and not isinstance(c, bool) and c > 0 else 0  # type: ignore[return-value]
                 for c in counts)


def _saver(run_path: Path | None, setup: dict | None) -> Callable[[EvaluationResult], None] | None:
    """Saves the label and embedding results before the judged metrics start."""
    if run_path is None or setup is None:
        return None
    from ragmeter.runs.store import save_partial

    def save(partial: EvaluationResult) -> None:
        save_partial(run_path, setup, partial)

    return save


def _recording(settings: Settings, resume: Run | None,
               dataset: dict[str, Any] | None = None) -> tuple[Path | None, dict | None, IO[str] | None]:
    """The run directory, its setup and the lock this process holds on it (close it at the end)."""
    if resume is None and (not settings.save or settings.dry_run):
        return None, None, None
    from ragmeter.runs.lock import acquire
    from ragmeter.runs.resume import absolute_options, locked_again
    from ragmeter.runs.store import check_writable, create_run, reopen_run

    if resume is not None:  # the options it finishes with (a new server URL, timeout) are recorded
        if settings.dry_run:
            return resume.path, {**resume.setup, "options": absolute_options(settings.stored())}, None
        lock = acquire(resume.path)  # a second resume of the same run is refused while this one runs
        try:
            current = locked_again(resume)  # what the run is now: another process may have finished it
            setup = {**current, "options": absolute_options(settings.stored())}
            return resume.path, reopen_run(resume.path, setup), lock
        except BaseException:
            lock.close()
            raise
    check_writable(settings.runs_dir)  # before any scoring: an unwritable folder costs nothing
    path, setup = create_run(settings.runs_dir, settings.name, absolute_options(settings.stored()), dataset)
    try:
        return path, setup, acquire(path)
    except BaseException:
        from ragmeter.runs.store import mark_stopped

        mark_stopped(path, setup, RuntimeError("the run directory could not be locked"))
        raise


def _streamed(settings: Settings, path: str, block: int, measures: tuple[Measure, ...], sources: Sources,
              resume: Run | None, notify: Callable[[str], None] | None) -> EvaluationRun:
    if sources.action_criteria is not None and sources.action_criteria.cases:  # one more pass over the ids
        from ragmeter.actions.criteria import warn_unknown_cases
        from ragmeter.io.jsonl_blocks import iter_blocks

        ids = (s.id for samples in iter_blocks(path, 10_000) for s in samples)
        warn_unknown_cases(sources.action_criteria, ids, notify)
    opened: dict[str, Any] = {"path": None, "setup": None, "lock": None}

    def open_run(dataset: dict[str, Any]) -> tuple[Path | None, dict | None]:
        if resume is not None:
            from ragmeter.runs.resume import check_fingerprint

            check_fingerprint(resume, dataset["fingerprint"])
        opened["path"], opened["setup"], opened["lock"] = _recording(settings, resume, dataset)
        return opened["path"], opened["setup"]

    from ragmeter.runs.blockwise import evaluate_streaming

    try:
        summary, dataset = evaluate_streaming(path, measures, block=block, open_run=open_run,
                                              corpus=settings.corpus, sources=sources)
    except BaseException as exc:
        if opened["path"] is not None and opened["setup"] is not None:
            _stopped(opened["path"], opened["setup"], exc, sources.judge, None)
        raise
    finally:
        if opened["lock"] is not None:
            opened["lock"].close()
    run_path = opened["path"]
    return EvaluationRun(settings, run_path, streamed=StreamedEvaluation(summary, dataset, measures, block))
