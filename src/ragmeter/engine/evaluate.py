"""Evaluate a dataset: resolve the measures, then score each kind of metric from its evidence.

The retrieved view is cut at ``k`` unless a measure names its own ``@k``. The context view
(what reached the prompt) is scored whole, since the model read all of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.measure import Measure, split_measure_list
from ragmeter.core.notebook import notebook_progress
from ragmeter.core.progress import Progress
from ragmeter.core.results import Outcome
from ragmeter.core.sample import Sample
from ragmeter.core.settings import DEFAULTS, Settings
from ragmeter.engine.coverage import report_coverage, report_nothing_retrieved
from ragmeter.engine.label_scoring import score_labels
from ragmeter.evidence.sources import Sources, build_sources
from ragmeter.io.dataset import Dataset, from_samples, load_dataset
from ragmeter.metrics import make_measure, parse_measure
from ragmeter.metrics.kinds import EmbeddingSpec, JudgedSpec, LabelSpec

if TYPE_CHECKING:  # a label-only run loads no judge, embedding, action or record code
    from ragmeter.actions.criteria import CriteriaSet
    from ragmeter.embeddings.base import EmbedderLike
    from ragmeter.evidence.rubric_criteria import RubricCriterion
    from ragmeter.judges.judge import Judge
    from ragmeter.records.lookup import RecordLookup

DEFAULT_METRICS = ("precision", "recall", "hit_rate", "reciprocal_rank", "ndcg")


def resolve_measures(
    metrics: Iterable[str | Measure] | None, k: int | None, *, view: str | None = None
) -> tuple[Measure, ...]:
    """Parse measure strings into measures.

    ``k``: the cut-off of the retrieved list, a positive integer, or ``None`` for the whole
    list (0 is refused: it is not a cut-off). ``view`` moves measures that kept the default
    view onto that view (``'both'``: each measure on the retrieved list and on the context,
    side by side). A measure on the retrieved view without its own @k takes ``k``; the
    context view is scored whole.
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise InvalidParameterError(f"k must be a positive integer, or None for the whole list; got {k!r}")
    if view not in (None, "retrieved", "context", "both"):
        raise InvalidParameterError(f"view must be 'retrieved', 'context' or 'both', got {view!r}")
    views = ("retrieved", "context") if view == "both" else (view,)
    out: list[Measure] = []
    for item in metrics if metrics is not None else DEFAULT_METRICS:
        parsed = item if isinstance(item, Measure) else parse_measure(item)
        for v in views:
            m = parsed
            if v is not None and "view" in m.spec.params and m.params["view"] == "retrieved":
                m = make_measure(m.name, m.k, **{**m.params, "view": v})
            if m.k is None and m.view == "retrieved" and m.spec.accepts_k:
                m = m.with_k(k)
            if m not in out:
                out.append(m)
    if not out:
        raise InvalidParameterError("no metrics requested")
    return tuple(out)


def measure_list(metrics: str | Iterable[str | Measure] | None) -> list[str | Measure] | None:
    """``"precision@5, mrr"`` -> ``["precision@5", "mrr"]`` (commas inside parentheses kept);
    a list or tuple is taken item by item, each string item split the same way."""
    if metrics is None:
        return None
    if isinstance(metrics, str):
        return list(split_measure_list(metrics))
    if isinstance(metrics, Measure):
        return [metrics]
    out: list[str | Measure] = []
    for item in metrics:
        if isinstance(item, str):
            out.extend(split_measure_list(item))
        elif isinstance(item, Measure):
            out.append(item)
        else:
            raise InvalidParameterError(f"metrics: each item must be a metric name or a Measure, got "
                                        f"{type(item).__name__}")
    return out


def as_dataset(data: Any) -> Dataset:
    """``data`` as a :class:`Dataset`: a Dataset as is, samples fingerprinted, anything else read
    by :func:`ragmeter.io.load_dataset` (paths, lists of dicts, DataFrames, Ragas, DeepEval...)."""
    if isinstance(data, Dataset):
        return data
    if isinstance(data, (list, tuple)) and all(isinstance(s, Sample) for s in data):
        return from_samples(data)
    return load_dataset(data)


def judge_for(judge: Any) -> tuple[Any, bool]:
    """(the judge, whether this call made it and must close its ledger). A string is a judge
    spec as ``--judge`` takes it (:func:`ragmeter.core.judge_specs.judge_specs`, ``"none"``,
    ``"auto"``), built by :func:`ragmeter.judges.judge_factory.make_judge` with the
    default settings (the ledger in ``$RAGMETER_RUNS_DIR``, else ``runs/``)."""
    if judge is None or not isinstance(judge, str):
        return judge, False
    from ragmeter.judges.judge_factory import make_judge  # noqa: I001 - a label-only call loads no judge code

    made = make_judge(judge, Settings())
    return made, made is not None


async def aevaluate(
    data: Any,
    metrics: str | Iterable[str | Measure] | None = None,
    *,
    k: int | None = DEFAULTS.k,
    view: str | None = None,
    judge: Judge | str | None = None,
    embedder: EmbedderLike | None = None,
    criteria: Mapping[str, RubricCriterion] | None = None,
    progress: Progress | None = None,
    before_judged: Callable[[EvaluationResult], None] | None = None,
    records: RecordLookup | None = None,
    action_criteria: CriteriaSet | None = None,
) -> EvaluationResult:
    """Score every sample with every measure: the async core of :func:`evaluate` (same
    arguments), for code that runs in an event loop (``await ragmeter.aevaluate(...)``)."""
    result = await _scored(data, metrics, k, view, judge, progress, before_judged,
                           dict(embedder=embedder, records=records, action_criteria=action_criteria, criteria=criteria))
    report_coverage({m: result.outcomes[m] for m in result.measures})
    report_nothing_retrieved(result)
    return result


async def _scored(data: Any, metrics: str | Iterable[str | Measure] | None, k: int | None, view: str | None,
                  judge: Judge | str | None, progress: Progress | None,
                  before_judged: Callable[[EvaluationResult], None] | None, parts: dict[str, Any]) -> EvaluationResult:
    """The keywords resolved (the data read, the measures parsed, a judge spec built), then scored
    through the sources made of the judge and the other ``parts`` (``evaluate``'s keywords)."""
    dataset = as_dataset(data)
    measures = resolve_measures(measure_list(metrics), k, view=view)
    actions = parts["action_criteria"]
    if actions is not None and actions.cases:
        from ragmeter.actions.criteria import warn_unknown_cases

        warn_unknown_cases(actions, (s.id for s in dataset.samples), stacklevel=4)
    the_judge, owned = judge_for(judge)
    try:
        return await ascore(dataset, measures, build_sources(judge=the_judge, **parts), progress=progress,
                            before_judged=before_judged)
    finally:
        if owned and the_judge is not None:
            the_judge.ledger.close()


def evaluate_with(dataset: Dataset, measures: Sequence[Measure], sources: Sources, *,
                  progress: Progress | None = None,
                  before_judged: Callable[[EvaluationResult], None] | None = None) -> EvaluationResult:
    """:func:`evaluate` for a caller that has resolved its measures and built its sources once
    (the run driver, the streaming and Ray engines, the watcher). Label measures alone are scored
    here, without an event loop (nothing to wait for: no asyncio to import, no loop to start)."""
    if all(isinstance(m.spec, LabelSpec) for m in measures):
        result = _labels_only(dataset, tuple(measures), sources, progress)
    else:
        from ragmeter.core.aio import run_sync

        result = run_sync(lambda: ascore(dataset, measures, sources, progress=progress, before_judged=before_judged))
    report_coverage({m: result.outcomes[m] for m in result.measures})  # the warning points at the caller
    report_nothing_retrieved(result)
    return result


def _labels_only(dataset: Dataset, measures: tuple[Measure, ...], sources: Sources,
                 progress: Progress | None) -> EvaluationResult:
    """What :func:`ascore` returns for label measures alone (the same steps, with nothing awaited)."""
    if progress is None and sources.judge is not None:
        progress = notebook_progress()
    outcomes: dict[Measure, Sequence[Outcome]] = {}
    outcomes.update(score_labels(list(measures), dataset.samples, dataset.fingerprint, progress=progress,
                                 columns=dataset.columns))
    return EvaluationResult(dataset.samples, measures, outcomes, dataset.fingerprint, dataset.path,
                            testset_fingerprint=dataset.testset_fingerprint, evidence=None, judge_stats=None,
                            columns=dataset.columns)


async def ascore(dataset: Dataset, measures: Sequence[Measure], sources: Sources, *,
                 progress: Progress | None = None,
                 before_judged: Callable[[EvaluationResult], None] | None = None) -> EvaluationResult:
    """Every measure's outcomes over ``dataset``: the label metrics from the labels, the
    embedding metrics through ``sources.embedder``, the judged metrics from the evidence
    gathered through ``sources``. ``before_judged``: given the rest before any judge call."""
    measures = tuple(measures)
    if progress is None and sources.judge is not None:
        progress = notebook_progress()
    samples = dataset.samples  # columns held: never read on a label-only run (they may be built lazily)
    columns = dataset.columns
    outcomes: dict[Measure, Sequence[Outcome]] = {}
    outcomes.update(score_labels([m for m in measures if isinstance(m.spec, LabelSpec)], samples,
                                 dataset.fingerprint, progress=progress, columns=columns))
    embedded = [m for m in measures if isinstance(m.spec, EmbeddingSpec)]
    if embedded:  # model time: off the event loop
        import asyncio

        from ragmeter.engine.embedding_scoring import score_embedded

        outcomes.update(await asyncio.to_thread(score_embedded, embedded, samples, dataset.fingerprint,
                                                sources.embedder, progress=progress))
    judged_measures = [m for m in measures if isinstance(m.spec, JudgedSpec)]
    if before_judged is not None and judged_measures and outcomes:
        done = tuple(m for m in measures if m in outcomes)
        before_judged(EvaluationResult(samples, done, outcomes, dataset.fingerprint, dataset.path,
                                       testset_fingerprint=dataset.testset_fingerprint, columns=columns))
    judged: Mapping[Measure, Sequence[Outcome]] = {}
    evidence = None
    if judged_measures:
        from ragmeter.engine.judged_scoring import ascore_judged

        with sources.judge.session() if sources.judge is not None else nullcontext():  # each key asked once
            judged, evidence = await ascore_judged(judged_measures, samples, dataset.fingerprint, sources,
                                                   progress=progress)
    outcomes.update(judged)
    stats = sources.judge.stats.as_dict() if sources.judge is not None and judged else None
    return EvaluationResult(samples, measures, outcomes, dataset.fingerprint, dataset.path,
                            testset_fingerprint=dataset.testset_fingerprint,
                            evidence=tuple(evidence) if evidence is not None else None, judge_stats=stats,
                            columns=columns)


def evaluate(
    data: Any,
    metrics: str | Iterable[str | Measure] | None = None,
    *,
    k: int | None = DEFAULTS.k,
    view: str | None = None,
    judge: Judge | str | None = None,
    embedder: EmbedderLike | None = None,
    criteria: Mapping[str, RubricCriterion] | None = None,
    progress: Progress | None = None,
    before_judged: Callable[[EvaluationResult], None] | None = None,
    records: RecordLookup | None = None,
    action_criteria: CriteriaSet | None = None,
) -> EvaluationResult:
    """Score every sample with every measure.

    Label metrics (precision, recall, MRR, nDCG, ...) need only the labels. Judged metrics
    (faithfulness, context_recall, ...) read one shared claim matrix built through ``judge``;
    without a judge they are :class:`~ragmeter.core.results.NotComputed` with the reason, never
    0. Embedding metrics use ``embedder``. A score that cannot be computed, or whose judge reply
    never validated, is kept as NotComputed or Failed and left out of the means.

    Parameters
    ----------
    data : path, records, Dataset or sequence of Sample
        What to score: anything :func:`ragmeter.load_dataset` reads (a path, a list of dicts,
        a DataFrame, a Hugging Face dataset, Ragas or DeepEval samples), its result, or
        samples built in code.
    metrics : str or iterable of str or Measure, optional
        ``"precision@5,mrr"``, or measure strings such as ``"ndcg@5"``, ``"mrr"``,
        ``"faithfulness(unsupported='pass')"``
        (``ragmeter metrics`` lists them all); aliases resolve. Default: precision, recall,
        hit_rate, reciprocal_rank and ndcg.
    k : int or None, default 5
        The cut-off of the retrieved list for measures that give no ``@k``; ``None``: the
        whole list. The context view is always scored whole.
    view : {None, 'retrieved', 'context', 'both'}, optional
        Moves measures that kept the default view onto this one (``'both'``: each measure on
        the retrieved list and on the context, side by side).
    judge : Judge or str, optional
        The :class:`ragmeter.judges.Judge` (a backend plus its ledger) that judged metrics ask,
        or a spec string as ``--judge`` takes it (``"local"``, ``"openai:gpt-4o-mini"``: see
        :func:`judge_for`).
    embedder : Embedder or callable, optional
        An :class:`ragmeter.embeddings.base.Embedder`, or a function ``list[str] -> vectors``;
        default: the bundled MiniLM, loaded only when an embedding metric runs.
    criteria : mapping of str to RubricCriterion, optional
        Rubric criteria besides the built-in ones, by name.
    progress : Progress, optional
        Told how each stage advances (:class:`ragmeter.core.progress.Progress`): label
        metrics, embeddings, judge calls; in a notebook, an updating line by default.
    before_judged : callable, optional
        Given the label and embedding results before any judged metric starts (the run driver
        saves them, so a judge failure never costs the rest of the table).
    records : RecordLookup, optional
        The user's system of record (:class:`ragmeter.records.RecordLookup`), in which the
        answers' stated facts are looked up (``record_accuracy``, ``record_coverage``).
    action_criteria : CriteriaSet, optional
        Criteria on the samples' tool calls, for every case and by case id
        (``action_pass_rate``; :func:`ragmeter.actions.load_rubric_criteria`).

    Returns
    -------
    EvaluationResult
        Every outcome per measure and sample, with summaries, means and provenance.

    Raises
    ------
    InvalidParameterError
        An unknown metric or parameter, a bad ``k`` or ``view``, or no metric at all.
    JudgeConfigError, BudgetExceeded
        From the judge: a backend that cannot be used, or the token budget reached.

    Warns
    -----
    LowCoverageWarning
        A measure scored fewer than ``Settings.min_coverage`` of the samples (also a log
        record on the ``ragmeter`` logger); the message says why the rest were not scored.
    NothingRetrievedWarning
        Rank metrics asked of a dataset where no sample has a retrieved list: they are all 0
        (nothing retrieved); the message says what to give.

    Notes
    -----
    A sync wrapper of :func:`aevaluate`; it works inside a running event loop too (a notebook):
    there the evaluation runs on its own loop in a worker thread.

    See Also
    --------
    resolve_measures : how measure strings, ``k`` and ``view`` become measures.
    ragmeter.runs.driver.run_evaluation : the same with a run directory, resume and cost.

    Examples
    --------
    The bundled sample (the six questions of the article "RAG Evaluation Metrics: Formulas and a
    Worked Example"), label metrics only:

    >>> from ragmeter import evaluate, load_dataset
    >>> data = load_dataset("examples/warranty/dataset.jsonl")
    >>> r = evaluate(data, ["precision@5", "mrr@5"])
    >>> round(r.summary("mrr@5").mean, 3), r.outcome("mrr@5", "q3")
    (0.617, Score(value=0.2))

    A judged metric without a judge is not computed, with the reason, and has no mean:

    >>> r = evaluate(data, ["faithfulness"])
    >>> r.outcome("faithfulness", "q1").status, r.means()
    ('not_computed', {'faithfulness': None})
    """
    from ragmeter.core.aio import run_sync

    result = run_sync(lambda: _scored(data, metrics, k, view, judge, progress, before_judged,
                                      dict(embedder=embedder, records=records, action_criteria=action_criteria,
                                           criteria=criteria)))
    report_coverage({m: result.outcomes[m] for m in result.measures})  # the warning points at the caller
    report_nothing_retrieved(result)
    return result
