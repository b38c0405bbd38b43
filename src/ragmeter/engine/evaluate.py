"""Evaluate a dataset: resolve the measures, then score each kind of metric from its evidence.

The retrieved view is cut at ``k`` unless a measure names its own ``@k``. The context view
(what reached the prompt) is scored whole, since the model read all of it.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ragmeter.actions.criteria import CriteriaSet
from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.measure import Measure
from ragmeter.core.progress import Progress
from ragmeter.core.results import Outcome
from ragmeter.core.sample import Sample
from ragmeter.core.settings import DEFAULTS
from ragmeter.engine.embedding_scoring import score_embedded
from ragmeter.engine.judged_scoring import score_judged
from ragmeter.engine.label_scoring import score_labels
from ragmeter.io.dataset import Dataset, from_samples
from ragmeter.metrics import make_measure, parse_measure
from ragmeter.metrics.criteria import Criterion
from ragmeter.metrics.kinds import EmbeddingSpec, JudgedSpec, LabelSpec
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


def evaluate(
    data: Dataset | Sequence[Sample],
    metrics: Iterable[str | Measure] | None = None,
    *,
    k: int | None = DEFAULTS.k,
    view: str | None = None,
    judge: Any = None,
    embedder: Any = None,
    criteria: Mapping[str, Criterion] | None = None,
    progress: Progress | None = None,
    records: RecordLookup | None = None,
    action_criteria: CriteriaSet | None = None,
) -> EvaluationResult:
    """Score every sample with every measure (see :func:`resolve_measures` for k and view).

    Label metrics need only the labels. Judged metrics (faithfulness, context_recall, ...)
    read one shared claim matrix built through ``judge`` (a :class:`ragmeter.judges.Judge`);
    without a judge they are NotComputed with the reason. Embedding metrics use ``embedder``
    (the bundled MiniLM by default). ``criteria``: rubric criteria besides the built-in ones;
    ``progress``: told how the judge calls advance (:class:`ragmeter.core.progress.Progress`).
    ``records``: a :class:`ragmeter.records.RecordLookup` the answers' facts are checked in
    (``record_accuracy``, ``record_coverage``); ``action_criteria``: criteria on the samples'
    tool calls for every case and by case id (``action_pass_rate``;
    :func:`ragmeter.actions.load_criteria`).
    """
    dataset = data if isinstance(data, Dataset) else from_samples(data)
    measures = resolve_measures(metrics, k, view=view)
    samples = dataset.samples
    outcomes: dict[Measure, tuple[Outcome, ...]] = {}
    outcomes.update(score_labels([m for m in measures if isinstance(m.spec, LabelSpec)], samples,
                                 dataset.fingerprint))
    judged, evidence = score_judged([m for m in measures if isinstance(m.spec, JudgedSpec)], samples,
                                    dataset.fingerprint, judge, embedder=embedder, criteria=criteria,
                                    progress=progress, records=records, action_criteria=action_criteria)
    outcomes.update(judged)
    outcomes.update(score_embedded([m for m in measures if isinstance(m.spec, EmbeddingSpec)], samples,
                                   dataset.fingerprint, embedder))
    return EvaluationResult(samples, measures, outcomes, dataset.fingerprint, dataset.path,
                            testset_fingerprint=dataset.testset_fingerprint,
                            evidence=tuple(evidence) if evidence is not None else None,
                            judge_stats=judge.stats.as_dict() if judge is not None and judged else None)
