"""The result of a TREC evaluation: per-topic values and trec_eval's summaries."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmeter.core.result_access import import_pandas

MIN_GEO_MEAN = 0.00001  # trec_eval's floor before taking logs for gm_* measures


@dataclass
class TrecResult:
    """Per-topic values (topic order) and summaries, keyed by trec_eval's printed names; read
    through :class:`~ragmeter.core.result_access.ResultAccess` as ``EvaluationResult`` is."""

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

    @property
    def metric_names(self) -> list[str]:
        """The measures with a value per topic, as trec_eval prints their names."""
        return [n for n in self.kinds if n in self.per_topic]

    def means(self) -> dict[str, float | None]:
        """Measure name -> the ``all`` value as a float (the mean; the sum for counts, the
        geometric mean for gm_*: trec_eval's summaries), ``None`` when no topic was scored;
        the :class:`~ragmeter.core.result_access.ResultAccess` reading that
        ``EvaluationResult`` shares (``mean`` gives trec_eval's printed value and type)."""
        return {n: float(self.mean(n)) if self.topics else None for n in self.metric_names}

    def values(self, name: str) -> list[float | None]:
        """Per-topic values in topic order (trec_eval's output order)."""
        return [float(v) for v in self.per_topic[name].tolist()]

    def to_dataframe(self) -> Any:
        """A pandas DataFrame: one row per topic (index ``topic``), one column per measure."""
        pd = import_pandas()
        return pd.DataFrame({n: self.per_topic[n] for n in self.metric_names},
                            index=pd.Index(self.topics, name="topic"))

    def query(self, name: str) -> dict[str, float]:
        return dict(zip(self.topics, self.per_topic[name].tolist()))

    def to_dict(self) -> dict[str, Any]:
        return {"topics": self.topics, "runid": self.runid,
                "measures": {n: {"all": self.mean(n),
                                 "per_topic": self.query(n) if n in self.per_topic and self.kinds[n] not in ("gm",)
                                 else None}
                             for n in self.names}}
