"""Score the label metrics: one ranked batch per view, each kernel over all samples at once.

Each measure's outcomes come back as a :class:`~ragmeter.core.score_column.ScoreColumn` (the
values as one array, a ``Score`` built only when read). A label-only dataset read as columns
(``Dataset.columns``) is scored from them on the retrieved view, without a ``Sample``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragmeter._version import __version__
from ragmeter.core.columns import LabelColumns
from ragmeter.core.measure import Measure
from ragmeter.core.progress import Progress
from ragmeter.core.results import Provenance
from ragmeter.core.sample import Sample
from ragmeter.core.score_column import ScoreColumn
from ragmeter.metrics.batch import RankedBatch
from ragmeter.metrics.kinds import label_kernel

NO_LABELS = "no relevance labels for this sample"


def score_labels(measures: Sequence[Measure], samples: Sequence[Sample], fingerprint: str, *,
                 progress: Progress | None = None, columns: LabelColumns | None = None
                 ) -> dict[Measure, ScoreColumn]:
    """Every label measure's outcomes; a sample with no labels is NotComputed for all of them.
    ``columns``: the same samples as columns; the retrieved view is then read from them and
    ``samples`` is not touched unless a measure ranks another view. ``progress`` advances once
    per measure (each runs over all samples at once)."""
    batches: dict[str, RankedBatch] = {}
    out: dict[Measure, ScoreColumn] = {}
    n = len(columns) if columns is not None else len(samples)
    if progress is not None and measures:
        progress.start(f"label metrics ({n} samples)", len(measures))
    for index, m in enumerate(measures):
        if m.view not in batches:
            cuts = [v.k for v in measures if v.view == m.view]  # the ranks past the deepest are never read
            depth = None if None in cuts else max(k for k in cuts if k is not None)
            batches[m.view] = _batch(m.view, samples, columns, depth)
        out[m] = _outcomes(m, batches[m.view], fingerprint)
        if progress is not None:
            progress.advance(index)
    return out


def _batch(view: str, samples: Sequence[Sample], columns: LabelColumns | None, depth: int | None) -> RankedBatch:
    if columns is not None and view == "retrieved":
        return RankedBatch.from_columns(columns, depth)
    return RankedBatch.from_lists([s.ranked_ids(view) for s in samples], [s.relevance for s in samples])


def _outcomes(m: Measure, batch: RankedBatch, fingerprint: str) -> ScoreColumn:
    kernel = label_kernel(m)
    provenance = Provenance(
        metric=str(m), metric_name=m.name, metric_version=m.spec.version, params=dict(m.params), k=m.k,
        view=m.view, ragmeter_version=__version__, dataset_fingerprint=fingerprint, metric_origin=m.spec.origin)
    computed = kernel(batch, m)
    values = np.asarray(computed.values, dtype=np.float64)
    labeled = np.asarray(batch.has_labels, dtype=bool)
    undefined = np.asarray(computed.undefined, dtype=bool)
    if labeled.all() and not undefined.any():  # every sample scored
        return ScoreColumn(values, provenance)
    codes = np.where(labeled, np.where(undefined, 1, -1), 0)
    return ScoreColumn(values, provenance, codes, (NO_LABELS, computed.reason))
