"""``EvaluationResult``: every sample's outcome for every measure, as values and as tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ragmeter.analysis.aggregate import MetricSummary, summarize
from ragmeter.core.results import Outcome, Score
from ragmeter.core.sample import Sample
from ragmeter.metrics.spec import Measure


@dataclass(frozen=True)
class EvaluationResult:
    """Outcomes keyed by canonical measure string, each a tuple aligned with ``samples``."""

    samples: tuple[Sample, ...]
    measures: tuple[Measure, ...]
    outcomes: Mapping[str, tuple[Outcome, ...]]
    dataset_fingerprint: str
    dataset_path: str | None = None
    testset_fingerprint: str = ""
    evidence: tuple | None = None  # per-sample claim matrices, when judged metrics ran
    judge_stats: dict | None = None  # calls, re-asks, cached, tokens, per prompt

    @property
    def metric_names(self) -> list[str]:
        return [str(m) for m in self.measures]

    def __getitem__(self, metric: str) -> tuple[Outcome, ...]:
        return self.outcomes[metric]

    def outcome(self, metric: str, sample_id: str) -> Outcome:
        """One sample's outcome: ``result.outcome("faithfulness", "q1").value``."""
        for s, o in zip(self.samples, self.outcomes[metric]):
            if s.id == sample_id:
                return o
        raise KeyError(f"no sample with id {sample_id!r}")

    def summary(self, metric: str) -> MetricSummary:
        return summarize(metric, self.outcomes[metric])

    def means(self) -> dict[str, float | None]:
        """Mean per measure over scored samples (``None`` if none was scored)."""
        return {name: self.summary(name).mean for name in self.metric_names}

    def values(self, metric: str) -> list[float | None]:
        return [o.value if isinstance(o, Score) else None for o in self.outcomes[metric]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"metrics": {name: summary + provenance}, "samples": [...]}``."""
        metrics = {}
        for m in self.measures:
            name = str(m)
            entry = self.summary(name).as_dict()
            entry["provenance"] = self.outcomes[name][0].provenance.as_dict() if self.samples else None
            metrics[name] = entry
        samples = []
        for i, s in enumerate(self.samples):
            row: dict[str, Any] = {"id": s.id, "metrics": {}}
            for name in self.metric_names:
                o = self.outcomes[name][i]
                cell: dict[str, Any] = {"status": o.status, "value": o.value}
                if o.status == "not_computed":
                    cell["reason"] = o.reason
                elif o.status == "failed":
                    cell["error"] = o.error
                row["metrics"][name] = cell
            samples.append(row)
        if self.evidence is not None:
            for row, ev in zip(samples, self.evidence):
                row["evidence"] = ev.as_dict()
        out = {"dataset": {"path": self.dataset_path, "fingerprint": self.dataset_fingerprint,
                           "testset_fingerprint": self.testset_fingerprint},
               "metrics": metrics, "samples": samples}
        if self.judge_stats is not None:
            out["judge"] = {**self.judge_stats, "calls_per_sample": self.calls_per_sample}
        return out

    @property
    def calls_per_sample(self) -> float | None:
        """Judge calls made per sample in this run (0 when everything came from the ledger)."""
        if self.judge_stats is None or not self.samples:
            return None
        return self.judge_stats["calls"] / len(self.samples)

    def to_dataframe(self, *, long: bool = False):
        """A pandas DataFrame: wide (one row per sample, NaN where not scored) or long (with status)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - exercised only without the extra
            raise ImportError("to_dataframe needs pandas: pip install 'ragmeter[dataframe]'") from None
        if long:
            rows = [{"sample_id": s.id, "metric": name, "value": o.value, "status": o.status,
                     "reason": getattr(o, "reason", None) or getattr(o, "error", None)}
                    for name in self.metric_names for s, o in zip(self.samples, self.outcomes[name])]
            return pd.DataFrame(rows, columns=["sample_id", "metric", "value", "status", "reason"])
        data = {name: [float("nan") if v is None else v for v in self.values(name)] for name in self.metric_names}
        return pd.DataFrame(data, index=pd.Index([s.id for s in self.samples], name="sample_id"))
