"""The result of a TREC evaluation: per-topic values and trec_eval's summaries."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MIN_GEO_MEAN = 0.00001  # trec_eval's floor before taking logs for gm_* measures


@dataclass
class TrecResult:
    """Per-topic values (topic order) and summaries, keyed by trec_eval's printed names."""

    topics: list[str]
    per_topic: dict[str, np.ndarray]
    kinds: dict[str, str]
    runid: str
    missing: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    num_rel_all: int | None = None  # -c: trec_eval's num_rel summary, qrels lines with rel > 0 (any -l)

    @property
    def names(self) -> list[str]:
        return list(self.kinds)

    def mean(self, name: str) -> Any:
        """The ``all`` value as trec_eval computes it: the sum in topic order over the number of
        topics, the sum for counts, exp(mean of logs of max(v, 1e-5)) for gm_*."""
        kind = self.kinds[name]
        if kind == "runid":
            return self.runid
        if kind == "num_q":
            return len(self.topics)
        if name == "num_rel" and self.num_rel_all is not None:
            return self.num_rel_all
        values = self.per_topic[name]
        if kind == "count":
            return int(values.sum())
        if not len(values):
            return 0.0
        if kind == "gm":
            total = 0.0
            for v in values.tolist():  # C's log, added in topic order (math.fsum or numpy would differ)
                total += math.log(max(v, MIN_GEO_MEAN))
            return math.exp(total / len(values))
        return float(np.cumsum(values)[-1] / len(values))  # sequential, in topic order, as trec_eval sums

    def query(self, name: str) -> dict[str, float]:
        return dict(zip(self.topics, self.per_topic[name].tolist()))

    def to_dict(self) -> dict[str, Any]:
        return {"topics": self.topics, "runid": self.runid,
                "measures": {n: {"all": self.mean(n),
                                 "per_topic": self.query(n) if n in self.per_topic and self.kinds[n] not in ("gm",)
                                 else None}
                             for n in self.names}}
