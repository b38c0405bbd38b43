"""Score the label metrics: one ranked batch per view, each kernel over all samples at once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragmeter._version import __version__
from ragmeter.core.gc_pause import gc_paused
from ragmeter.core.measure import Measure
from ragmeter.core.progress import Progress
from ragmeter.core.results import NotComputed, Outcome, Provenance, Score
from ragmeter.core.sample import Sample
from ragmeter.metrics.batch import RankedBatch
from ragmeter.metrics.kinds import label_kernel

NO_LABELS = "no relevance labels for this sample"


def score_labels(measures: Sequence[Measure], samples: Sequence[Sample], fingerprint: str, *,
                 progress: Progress | None = None) -> dict[Measure, tuple[Outcome, ...]]:
    """Every label measure's outcomes; a sample with no labels is NotComputed for all of them.
    ``progress`` advances once per measure (each runs over all samples at once)."""
    batches: dict[str, RankedBatch] = {}
    out: dict[Measure, tuple[Outcome, ...]] = {}
    if progress is not None and measures:
        progress.start(f"label metrics ({len(samples)} samples)", len(measures))
    with gc_paused():  # an outcome per sample and measure: no cycles among them
        for index, m in enumerate(measures):
            if m.view not in batches:
                batches[m.view] = RankedBatch.from_lists([s.ranked_ids(m.view) for s in samples],
                                                         [s.relevance for s in samples])
            out[m] = _outcomes(m, batches[m.view], samples, fingerprint)
            if progress is not None:
                progress.advance(index)
    return out


def _outcomes(m: Measure, batch: RankedBatch, samples: Sequence[Sample], fingerprint: str) -> tuple[Outcome, ...]:
    kernel = label_kernel(m)
    provenance = Provenance(
        metric=str(m), metric_name=m.name, metric_version=m.spec.version, params=dict(m.params), k=m.k,
        view=m.view, ragmeter_version=__version__, dataset_fingerprint=fingerprint)
    computed = kernel(batch, m)
    values = np.asarray(computed.values, dtype=np.float64).tolist()  # Python floats, as float() gives
    if batch.has_labels.all() and not computed.undefined.any():  # every sample scored
        return tuple([Score(value, provenance) for value in values])
    out: list[Outcome] = []
    for labeled, undefined, value in zip(batch.has_labels.tolist(), computed.undefined.tolist(), values):
        if not labeled:
            out.append(NotComputed(NO_LABELS, provenance))
        elif undefined:
            out.append(NotComputed(computed.reason, provenance))
        else:
            out.append(Score(value, provenance))
    return tuple(out)
