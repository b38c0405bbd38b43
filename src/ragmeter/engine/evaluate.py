"""Evaluate a dataset: resolve the measures, then score each kind of metric from its evidence.

The retrieved view is cut at ``k`` unless a measure names its own ``@k``. The context view
(what reached the prompt) is scored whole, since the model read all of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.measure import Measure
from ragmeter.core.progress import Progress
from ragmeter.core.results import Outcome
from ragmeter.core.sample import Sample
from ragmeter.core.settings import DEFAULTS
from ragmeter.embeddings.base import EmbedderLike
from ragmeter.engine.embedding_scoring import score_embedded
from ragmeter.engine.judged_scoring import score_judged
from ragmeter.engine.label_scoring import score_labels
from ragmeter.io.dataset import Dataset, from_samples
from ragmeter.metrics import make_measure, parse_measure
from ragmeter.metrics.criteria import Criterion
from ragmeter.metrics.kinds import EmbeddingSpec, JudgedSpec, LabelSpec

if TYPE_CHECKING:  # a label-only run loads no judge code
    from ragmeter.judges.judge import Judge

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


def evaluate(
    data: Dataset | Sequence[Sample],
    metrics: Iterable[str | Measure] | None = None,
    *,
    k: int | None = DEFAULTS.k,
    view: str | None = None,
    judge: Judge | None = None,
    embedder: EmbedderLike | None = None,
    criteria: Mapping[str, Criterion] | None = None,
    progress: Progress | None = None,
    before_judged: Callable[[EvaluationResult], None] | None = None,
) -> EvaluationResult:
    """Score every sample with every measure.

    Label metrics (precision, recall, MRR, nDCG, ...) need only the labels. Judged metrics
    (faithfulness, context_recall, ...) read one shared claim matrix built through ``judge``;
    without a judge they are :class:`~ragmeter.core.results.NotComputed` with the reason, never
    0. Embedding metrics use ``embedder``. A score that cannot be computed, or whose judge reply
    never validated, is kept as NotComputed or Failed and left out of the means.

    Parameters
    ----------
    data : Dataset or sequence of Sample
        What to score: :func:`ragmeter.load_dataset`'s result, or samples built in code.
    metrics : iterable of str or Measure, optional
        Measure strings such as ``"ndcg@5"``, ``"mrr"``, ``"faithfulness(unsupported='pass')"``
        (``ragmeter metrics`` lists them all); aliases resolve. Default: precision, recall,
        hit_rate, reciprocal_rank and ndcg.
    k : int or None, default 5
        The cut-off of the retrieved list for measures that give no ``@k``; ``None``: the
        whole list. The context view is always scored whole.
    view : {None, 'retrieved', 'context', 'both'}, optional
        Moves measures that kept the default view onto this one (``'both'``: each measure on
        the retrieved list and on the context, side by side).
    judge : Judge, optional
        The :class:`ragmeter.judges.Judge` (a backend plus its ledger) that judged metrics ask.
    embedder : Embedder or callable, optional
        An :class:`ragmeter.embeddings.base.Embedder`, or a function ``list[str] -> vectors``;
        default: the bundled MiniLM, loaded only when an embedding metric runs.
    criteria : mapping of str to Criterion, optional
        Rubric criteria besides the built-in ones, by name.
    progress : Progress, optional
        Told how the judge calls advance (:class:`ragmeter.core.progress.Progress`).
    before_judged : callable, optional
        Given the label and embedding results before any judged metric starts (the run driver
        saves them, so a judge failure never costs the rest of the table).

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

    See Also
    --------
    resolve_measures : how measure strings, ``k`` and ``view`` become measures.
    ragmeter.runs.evaluation.run_evaluation : the same with a run directory, resume and cost.

    Examples
    --------
    The bundled sample (the seed article's six questions), label metrics only:

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
    dataset = data if isinstance(data, Dataset) else from_samples(data)
    measures = resolve_measures(metrics, k, view=view)
    samples = dataset.samples
    outcomes: dict[Measure, tuple[Outcome, ...]] = {}
    outcomes.update(score_labels([m for m in measures if isinstance(m.spec, LabelSpec)], samples,
                                 dataset.fingerprint))
    outcomes.update(score_embedded([m for m in measures if isinstance(m.spec, EmbeddingSpec)], samples,
                                   dataset.fingerprint, embedder))
    judged_measures = [m for m in measures if isinstance(m.spec, JudgedSpec)]
    if before_judged is not None and judged_measures and outcomes:
        done = tuple(m for m in measures if m in outcomes)
        before_judged(EvaluationResult(samples, done, outcomes, dataset.fingerprint, dataset.path,
                                       testset_fingerprint=dataset.testset_fingerprint))
    judged, evidence = score_judged(judged_measures, samples, dataset.fingerprint, judge, embedder=embedder,
                                    criteria=criteria, progress=progress)
    outcomes.update(judged)
    return EvaluationResult(samples, measures, outcomes, dataset.fingerprint, dataset.path,
                            testset_fingerprint=dataset.testset_fingerprint,
                            evidence=tuple(evidence) if evidence is not None else None,
                            judge_stats=judge.stats.as_dict() if judge is not None and judged else None)
