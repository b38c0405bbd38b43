"""Score samples with label metrics: resolve measures, build one batch per view, run kernels.

The retrieved view is cut at ``k`` unless a measure names its own ``@k``. The context view
(what reached the prompt) is scored whole, since the model read all of it.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ragmeter._version import __version__
from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.results import NotComputed, Outcome, Provenance, Score
from ragmeter.core.sample import Sample
from ragmeter.engine.embedded import score_embedded
from ragmeter.engine.judged import score_judged
from ragmeter.engine.result import EvaluationResult
from ragmeter.io.dataset import Dataset, from_samples
from ragmeter.metrics import Measure, make_measure, parse_measure
from ragmeter.metrics.retrieval.batch import RankedBatch

DEFAULT_METRICS = ("precision", "recall", "hit_rate", "reciprocal_rank", "ndcg")
NO_LABELS = "no relevance labels for this sample"


def resolve_measures(
    metrics: Iterable[str | Measure] | None, k: int | None, *, view: str | None = None
) -> tuple[Measure, ...]:
    """Parse measure strings into measures.

    ``view`` moves measures that kept the default view onto that view (``'both'``: each
    measure on the retrieved list and on the context, side by side). A measure on the
    retrieved view without its own @k takes ``k``; the context view is scored whole.
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise InvalidParameterError(f"k must be a positive integer or None, got {k!r}")
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
            if str(m) not in {str(x) for x in out}:
                out.append(m)
    if not out:
        raise InvalidParameterError("no metrics requested")
    return tuple(out)


def evaluate(
    data: Dataset | Sequence[Sample],
    metrics: Iterable[str | Measure] | None = None,
    *,
    k: int | None = 5,
    view: str | None = None,
    judge: Any = None,
    embedder: Any = None,
    criteria: Any = None,
    on_judged: Any = None,
) -> EvaluationResult:
    """Score every sample with every measure (see :func:`resolve_measures` for k and view).

    Label metrics need only the labels. Judged metrics (faithfulness, context_recall, ...)
    read one shared claim matrix built through ``judge`` (a :class:`ragmeter.judges.Judge`);
    without a judge they are NotComputed with the reason.
    """
    dataset = data if isinstance(data, Dataset) else from_samples(data)
    measures = resolve_measures(metrics, k, view=view)
    samples = dataset.samples
    batches: dict[str, RankedBatch] = {}
    outcomes: dict[str, tuple[Outcome, ...]] = {}
    for m in measures:
        if m.spec.judged or m.spec.embedded:
            continue
        if m.view not in batches:
            batches[m.view] = RankedBatch.from_lists([s.ranked_ids(m.view) for s in samples],
                                                     [s.relevance for s in samples])
        outcomes[str(m)] = _outcomes(m, batches[m.view], samples, dataset.fingerprint)
    judged, evidence = score_judged([m for m in measures if m.spec.judged], samples, dataset.fingerprint, judge,
                                    embedder=embedder, criteria=criteria, on_done=on_judged)
    outcomes.update(judged)
    outcomes.update(score_embedded([m for m in measures if m.spec.embedded], samples, dataset.fingerprint, embedder))
    return EvaluationResult(samples, measures, outcomes, dataset.fingerprint, dataset.path,
                            testset_fingerprint=dataset.testset_fingerprint, evidence=tuple(evidence) if evidence is not None else None,
                            judge_stats=judge.stats.as_dict() if judge is not None and judged else None)


def _outcomes(m: Measure, batch: RankedBatch, samples: Sequence[Sample], fingerprint: str) -> tuple[Outcome, ...]:
    provenance = Provenance(
        metric=str(m), metric_name=m.name, metric_version=m.spec.version, params=dict(m.params), k=m.k,
        view=m.view, ragmeter_version=__version__, dataset_fingerprint=fingerprint)
    computed = m.spec.compute(batch, m)
    out: list[Outcome] = []
    for i, sample in enumerate(samples):
        if not batch.has_labels[i]:
            out.append(NotComputed(NO_LABELS, provenance))
        elif computed.undefined[i]:
            out.append(NotComputed(computed.reason, provenance))
        else:
            out.append(Score(float(computed.values[i]), provenance))
    return tuple(out)

