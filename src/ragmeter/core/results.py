"""Immutable metric outcomes: ``Score``, ``NotComputed`` and ``Failed``, each with provenance.

A sample gets exactly one outcome per metric. Only a ``Score`` enters a mean; the other two
are counted and shown with their reason, never averaged as 0 or NaN.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: How every measure's 95% interval is drawn (:mod:`ragmeter.core.bootstrap`); a new version when
#: its draws change.
INTERVAL_METHOD = "percentile bootstrap v2: 2000 resamples, seed 20261130, counts for values seen 8+ times"


@dataclass(frozen=True, slots=True)
class Provenance:
    """Everything that decides a number: two scores are comparable only if these agree."""

    metric: str  # canonical measure string, e.g. "ndcg(discount='jk2002')@5"
    metric_name: str
    metric_version: int
    params: Mapping[str, Any]
    k: int | None
    view: str
    ragmeter_version: str
    dataset_fingerprint: str | None = None
    judge: Mapping[str, Any] | None = None
    embedder: Mapping[str, Any] | None = None  # the embedding model of an embedding metric
    metric_origin: str | None = None  # who defined a metric that is not built in (its package and version)

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "metric_name": self.metric_name,
            "metric_version": self.metric_version,
            "params": dict(self.params),
            "k": self.k,
            "view": self.view,
            "ragmeter_version": self.ragmeter_version,
            "dataset_fingerprint": self.dataset_fingerprint,
            "interval": INTERVAL_METHOD,
            "judge": dict(self.judge) if self.judge else None,
            **({"embedder": dict(self.embedder)} if self.embedder else {}),
            **({"metric_origin": self.metric_origin} if self.metric_origin else {}),
        }


@dataclass(frozen=True, slots=True)
class Score:
    value: float
    provenance: Provenance = field(repr=False)
    status = "scored"


@dataclass(frozen=True, slots=True)
class NotComputed:
    reason: str
    provenance: Provenance = field(repr=False)
    status = "not_computed"

    @property
    def value(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Failed:
    error: str
    provenance: Provenance = field(repr=False)
    status = "failed"

    @property
    def value(self) -> None:
        return None


Outcome = Score | NotComputed | Failed
