"""The result of a TREC evaluation: per-topic values and trec_eval's summaries (no numpy needed).

Per-topic values are numpy arrays (the vectorised path) or lists (the small-file path); the
summaries are computed the same way for both, in topic order as trec_eval adds them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.core.result_access import import_pandas

MIN_GEO_MEAN = 0.00001  # trec_eval's floor before taking logs for gm_* measures
TEXT_KINDS = ("runid", "relstring")


def _floats(values: Any) -> list:
    return values.tolist() if hasattr(values, "tolist") else list(values)


@dataclass
class TrecResult:
    """Per-topic values (topic order) and summaries, keyed by trec_eval's printed names; read
    through :class:`~ragmeter.core.result_access.ResultAccess` as ``EvaluationResult`` is.

    ``zscores``: the per-topic values are z-scores (``-Z``; trec_eval converts each value,
    the log of a gm_* value, before summing them)."""

    topics: list[str]
    per_topic: dict[str, Any]  # name -> a list or numpy array, in topic order
    kinds: dict[str, str]
    runid: str
    missing: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    num_rel_all: int | None = None  # -c: trec_eval's num_rel summary, qrels lines with rel > 0 (any -l)
    zscores: bool = False

    @property
    def names(self) -> list[str]:
        return list(self.kinds)

    def mean(self, name: str) -> Any:
        """The ``all`` value as trec_eval computes it: the sum in topic order over the number of
        topics, the sum for counts, exp(mean of logs of max(v, 1e-5)) for gm_*; None for
        relstring (trec_eval prints it per topic only)."""
        kind = self.kinds[name]
        if kind == "runid":
            return self.runid
        if kind == "num_q":
            return len(self.topics)
        if kind == "relstring":
            return None
        if name == "num_rel" and self.num_rel_all is not None:
            return self.num_rel_all
        values = self.per_topic[name]
        if kind == "count" and not self.zscores:
            return int(math.fsum(_floats(values)))  # whole numbers: exact in any order
        if kind == "count":
            return _sequential(values)
        if not len(values):
            return 0.0
        if kind == "gm":
            logs = values if self.zscores else [math.log(max(v, MIN_GEO_MEAN)) for v in _floats(values)]
            return math.exp(_sequential(logs) / len(values))  # C's log, added in topic order
        return _sequential(values) / len(values)

    @property
    def metric_names(self) -> list[str]:
        """The measures with a number per topic, as trec_eval prints their names."""
        return [n for n in self.kinds if n in self.per_topic and self.kinds[n] not in TEXT_KINDS]

    def means(self) -> dict[str, float | None]:
        """Measure name -> the ``all`` value as a float (the mean; the sum for counts, the
        geometric mean for gm_*: trec_eval's summaries), ``None`` when no topic was scored;
        the :class:`~ragmeter.core.result_access.ResultAccess` reading that
        ``EvaluationResult`` shares (``mean`` gives trec_eval's printed value and type)."""
        return {n: float(self.mean(n)) if self.topics else None for n in self.metric_names}

    def values(self, name: str) -> list:
        """Per-topic values in topic order (trec_eval's output order)."""
        if self.kinds.get(name) in TEXT_KINDS:
            return list(self.per_topic[name])
        return [float(v) for v in _floats(self.per_topic[name])]

    def to_dataframe(self) -> Any:
        """A pandas DataFrame: one row per topic (index ``topic``), one column per measure."""
        pd = import_pandas()
        columns = [n for n in self.kinds if n in self.per_topic]
        return pd.DataFrame({n: list(self.per_topic[n]) for n in columns},
                            index=pd.Index(self.topics, name="topic"))

    def query(self, name: str) -> dict[str, Any]:
        return dict(zip(self.topics, _floats(self.per_topic[name])))

    def to_dict(self) -> dict[str, Any]:
        out = {"topics": self.topics, "runid": self.runid,
               "measures": {n: {"all": self.mean(n),
                                "per_topic": self.query(n) if n in self.per_topic and self.kinds[n] not in ("gm",)
                                else None}
                            for n in self.names}}
        return {**out, "zscores": True} if self.zscores else out


def _sequential(values: Sequence) -> float:
    """Left to right, as C adds in a loop (``sum`` and numpy's pairwise sums would differ in the
    last bit; numpy's ``cumsum`` adds in order)."""
    if hasattr(values, "cumsum"):
        return float(values.cumsum()[-1]) if len(values) else 0.0
    total = 0.0
    for v in values:
        total += v
    return total
