"""``EvaluationResult``: every sample's outcome for every measure, as values and as tables.

Outcomes are keyed by :class:`~ragmeter.core.measure.Measure`. Every look-up also takes a
name and resolves it as :func:`~ragmeter.core.measure.resolve_measure` does: an alias
(``"mrr"``), parameters left at their defaults, and no ``@k`` when the result holds the
measure at one cut-off. A name the result holds at several cut-offs is an error that lists
them; so is a name it does not hold.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ragmeter.core.columns import LabelColumns
from ragmeter.core.errors import RagmeterError
from ragmeter.core.measure import Measure, MeasureMap, resolve_measure
from ragmeter.core.result_access import import_pandas
from ragmeter.core.results import INTERVAL_METHOD, Failed, NotComputed, Outcome, Score
from ragmeter.core.sample import Sample
from ragmeter.core.score_column import ScoreColumn
from ragmeter.core.summary import MetricSummary, mean_of, summarize


class Recorded(Protocol):
    """Per-sample evidence a result keeps (the claim matrix of a judged run)."""

    def as_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class EvaluationResult:
    """What :func:`ragmeter.evaluate` returns: every outcome per measure, aligned with ``samples``,
    read through the :class:`~ragmeter.core.result_access.ResultAccess` methods that
    ``TrecResult`` shares.

    An outcome is a :class:`~ragmeter.core.results.Score`, or ``NotComputed`` / ``Failed`` with
    the reason; means and summaries leave the last two out and count them. Every lookup
    (``result[...]``, :meth:`summary`, :meth:`outcome`, :meth:`values`) takes a
    :class:`~ragmeter.core.measure.Measure` or any string that parses to one, aliases and
    default ``k`` resolved (``"mrr"`` finds ``reciprocal_rank@5``).

    Parameters
    ----------
    samples : sequence of Sample
        The scored samples, in dataset order.
    measures : tuple of Measure
        The measures, in the order asked for.
    outcomes : mapping of Measure to sequence of Outcome
        One outcome per sample for each measure (keys may also be canonical names); kept as a
        :class:`~ragmeter.core.measure.MeasureMap` in the order of ``measures``, each as a
        tuple, or as the :class:`~ragmeter.core.score_column.ScoreColumn` given (label
        measures: the values as an array, each outcome built when read).
    dataset_fingerprint, testset_fingerprint : str
        sha256 of the dataset, and of its questions and labels alone.
    dataset_path : str, optional
        Where the dataset was read from.
    evidence : tuple, optional
        Per-sample claim matrices, when judged metrics ran.
    judge_stats : dict, optional
        Calls, re-asks, cached judgments and tokens, per prompt.
    columns : LabelColumns, optional
        The samples' ids, rankings and labels as columns (a label-only dataset read as
        columns): the sample ids are read from them, so no ``Sample`` is touched to write
        the results.

    Raises
    ------
    MeasureNotFound
        (an ``InvalidParameterError`` and a ``KeyError``) a lookup of a measure that was not
        evaluated, naming the ones that were.
    KeyError
        :meth:`outcome` for an unknown sample id.

    Examples
    --------
    >>> from ragmeter import Sample, evaluate
    >>> r = evaluate([Sample("q1", retrieved=(), relevance={"a": 1.0})], ["mrr@5", "ndcg@5"])
    >>> r.measures
    (reciprocal_rank@5, ndcg@5)
    >>> r["mrr"] == r.outcomes["reciprocal_rank@5"] == r.outcomes[r.measures[0]]
    True
    >>> r.summary("mrr").mean
    0.0
    >>> r["precision@5"]
    Traceback (most recent call last):
    ...
    ragmeter.core.measure.MeasureNotFound: the result has no measure 'precision@5'; it holds: reciprocal_rank@5, ndcg@5
    """

    samples: Sequence[Sample]
    measures: tuple[Measure, ...]
    outcomes: Mapping[Measure, Sequence[Outcome]]
    dataset_fingerprint: str
    dataset_path: str | None = None
    testset_fingerprint: str = ""
    evidence: tuple[Recorded, ...] | None = None  # per-sample claim matrices, when judged metrics ran
    judge_stats: dict[str, Any] | None = None  # calls, re-asks, cached, tokens, per prompt
    columns: LabelColumns | None = None  # the samples as columns (ids read from them)

    def __post_init__(self) -> None:
        measures = tuple(self.measures)
        given: Mapping[Any, Sequence[Outcome]] = self.outcomes
        by_measure: list[tuple[Measure, Sequence[Outcome]]] = []
        for m in measures:
            key: Any = m if m in given else str(m)  # keys may also be canonical names
            if key not in given:
                raise ValueError(f"no outcomes for {m}")
            cells = given[key]
            by_measure.append((m, cells if isinstance(cells, ScoreColumn) else tuple(cells)))
        object.__setattr__(self, "measures", measures)
        object.__setattr__(self, "outcomes", MeasureMap(by_measure))
        # outcomes are immutable tuples: a summary (its bootstrap interval) is drawn once per measure
        object.__setattr__(self, "_summaries", {})

    def __repr__(self) -> str:
        """Short: sample and measure counts, up to 6 means, the dataset fingerprint. (No bootstrap
        interval is drawn for it: asyncio's runner shows the repr of the result it returns.)"""
        means = [f"{m} {_fmt(_mean(self.outcomes[m]))}" for m in self.measures[:6]]
        more = f", +{len(self.measures) - 6} more" if len(self.measures) > 6 else ""
        return (f"EvaluationResult({self.size} samples; {', '.join(means)}{more}; "
                f"dataset {self.dataset_fingerprint})")

    def _repr_html_(self) -> str:
        """A notebook table: one row per measure with its mean, 95% interval and coverage."""
        rows = []
        for m in self.measures:
            s = self.summary(m)
            ci = f"{s.ci95[0]:.3f} to {s.ci95[1]:.3f}" if s.ci95 else ""
            rows.append((str(m), _fmt(s.mean), ci, s.scored, s.not_computed, s.failed))
        where = f" from {self.dataset_path}" if self.dataset_path else ""
        title = f"ragmeter: {self.size} samples{where} (dataset {self.dataset_fingerprint})"
        from ragmeter.core.notebook_html import table_html  # a notebook's only

        return table_html(title, ("metric", "mean", "95% interval", "scored", "not computed", "failed"), rows,
                          note="per-sample values: result.to_dataframe()", max_rows=len(rows))

    @property
    def size(self) -> int:
        """The number of samples."""
        return len(self.columns) if self.columns is not None else len(self.samples)

    @property
    def sample_ids(self) -> Sequence[str]:
        """The samples' ids, in order (from the columns when held: no sample is built)."""
        if self.columns is not None:
            return self.columns.ids
        return [s.id for s in self.samples]

    @property
    def metric_names(self) -> list[str]:
        """The measures' canonical names, in order."""
        return [str(m) for m in self.measures]

    def measure(self, key: str | Measure) -> Measure:
        """The measure ``key`` names (see the module's resolution rules)."""
        return resolve_measure(key, self.measures)

    def __getitem__(self, key: str | Measure) -> Sequence[Outcome]:
        return self.outcomes[self.measure(key)]

    def outcome(self, key: str | Measure, sample_id: str) -> Outcome:
        """One sample's outcome: ``result.outcome("faithfulness", "q1").value``."""
        outcomes = self[key]
        for i, sid in enumerate(self.sample_ids):
            if sid == sample_id:
                return outcomes[i]
        raise KeyError(f"no sample with id {sample_id!r}")

    def summary(self, key: str | Measure) -> MetricSummary:
        """Mean over the scored samples, coverage and the 95% bootstrap interval."""
        m = self.measure(key)
        cache: dict[Measure, MetricSummary] = self.__dict__.setdefault("_summaries", {})
        if m not in cache:
            cache[m] = summarize(str(m), self.outcomes[m])
        return cache[m]

    def means(self) -> dict[str, float | None]:
        """Mean per measure over scored samples (``None`` if none was scored), by canonical name:
        the summary's mean (``math.fsum`` / scored), without drawing its bootstrap interval."""
        return {str(m): _mean(self.outcomes[m]) for m in self.measures}

    def values(self, key: str | Measure) -> list[float | None]:
        """Per-sample values in sample order (``None`` where not scored)."""
        outcomes = self[key]
        if isinstance(outcomes, ScoreColumn):
            return outcomes.value_list()
        return [o.value if isinstance(o, Score) else None for o in outcomes]

    def to_dict(self, *, samples: bool = True) -> dict[str, Any]:
        """JSON-ready: ``{"metrics": {name: summary + provenance}, "samples": [...]}``
        (``samples=False``: the rows left out, ``"samples": []``)."""
        if not samples:
            return self._document([])
        names = [str(m) for m in self.measures]
        columns = [outcome_cells(self.outcomes[m]) for m in self.measures]  # one pass per measure
        rows = [{"id": sid, "metrics": dict(zip(names, cells))} for sid, *cells in zip(self.sample_ids, *columns)] \
            if columns else [{"id": sid, "metrics": {}} for sid in self.sample_ids]
        if self.evidence is not None:
            for row, ev in zip(rows, self.evidence):
                row["evidence"] = ev.as_dict()
        return self._document(rows)

    def _document(self, samples: list[dict[str, Any]]) -> dict[str, Any]:
        metrics = {}
        for m in self.measures:
            summary = self.summary(m)
            entry: dict[str, Any] = summary.as_dict()
            entry["provenance"] = _provenance(self.outcomes[m]).as_dict() if self.size else None
            if entry["provenance"] is not None and summary.interval != INTERVAL_METHOD:
                entry["provenance"]["interval"] = summary.interval  # the approximation, at large n
            metrics[str(m)] = entry
        out: dict[str, Any] = {"dataset": {"path": self.dataset_path, "fingerprint": self.dataset_fingerprint,
                                           "testset_fingerprint": self.testset_fingerprint},
                               "metrics": metrics, "samples": samples}
        if self.judge_stats is not None:
            out["judge"] = {**self.judge_stats, "calls_per_sample": self.calls_per_sample}
        return out

    def log_to_mlflow(self, *, tracking_uri: str | None = None, experiment: str | None = None,
                      run_name: str | None = None) -> str:
        """Log this result to MLflow (setup as params, means and intervals as metrics, the HTML
        report and the results as artifacts); returns the MLflow run id. Needs
        ``pip install 'ragmeter[mlflow]'``. See :mod:`ragmeter.runs.mlflow_log`, which does it."""
        log_result = result_hook("log_to_mlflow")
        run_id: str = log_result(self, tracking_uri=tracking_uri, experiment=experiment, run_name=run_name)
        return run_id

    @property
    def calls_per_sample(self) -> float | None:
        """Judge calls made per sample in this run (0 when everything came from the ledger)."""
        if self.judge_stats is None or not self.size:
            return None
        calls: float = self.judge_stats["calls"]
        return calls / self.size

    def to_dataframe(self, *, long: bool = False) -> Any:
        """A pandas DataFrame: wide (one row per sample, NaN where not scored) or long (with status)."""
        pd = import_pandas()
        if long:
            rows = [{"sample_id": sid, "metric": str(m), "value": o.value, "status": o.status,
                     "reason": getattr(o, "reason", None) or getattr(o, "error", None)}
                    for m in self.measures for sid, o in zip(self.sample_ids, self.outcomes[m])]
            return pd.DataFrame(rows, columns=["sample_id", "metric", "value", "status", "reason"])
        data = {str(m): [float("nan") if v is None else v for v in self.values(m)] for m in self.measures}
        return pd.DataFrame(data, index=pd.Index(list(self.sample_ids), name="sample_id"))


def _mean(outcomes: Sequence[Outcome]) -> float | None:
    if isinstance(outcomes, ScoreColumn):
        return outcomes.mean()
    return mean_of([o.value for o in outcomes if isinstance(o, Score)])


def _provenance(outcomes: Sequence[Outcome]) -> Any:
    return outcomes.provenance if isinstance(outcomes, ScoreColumn) else outcomes[0].provenance


def outcome_cells(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """Each outcome's cell as ``to_dict`` writes it (a column's read from its arrays)."""
    if not isinstance(outcomes, ScoreColumn):
        return [outcome_cell(o) for o in outcomes]
    values = outcomes.values.tolist()
    if outcomes.all_scored:
        return [{"status": "scored", "value": v} for v in values]
    return [{"status": "scored", "value": v} if ok else outcome_cell(outcomes[i])
            for i, (v, ok) in enumerate(zip(values, outcomes.scored.tolist()))]


def outcome_cell(o: Outcome) -> dict[str, Any]:
    """One sample's outcome as ``to_dict`` writes it: status and value, and the reason or error."""
    if type(o) is Score:
        return {"status": "scored", "value": o.value}
    cell: dict[str, Any] = {"status": o.status, "value": o.value}
    if isinstance(o, NotComputed):
        cell["reason"] = o.reason
    elif isinstance(o, Failed):
        cell["error"] = o.error
    return cell


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


#: The entry-point group through which the layers above offer what a result can do with them
#: (pyproject.toml, ``[project.entry-points."ragmeter.result_hooks"]``): core names no module above it.
RESULT_HOOKS = "ragmeter.result_hooks"


def result_hook(name: str) -> Callable[..., Any]:
    """The function registered for ``name`` in :data:`RESULT_HOOKS` (``log_to_mlflow``:
    :func:`ragmeter.runs.mlflow_log.log_result`), loaded on first use."""
    from importlib.metadata import entry_points

    for hook in entry_points(group=RESULT_HOOKS, name=name):
        loaded: Callable[..., Any] = hook.load()
        return loaded
    raise RagmeterError(f"ragmeter's installed metadata registers no {name!r} hook (an install older than this "
                        "code): reinstall ragmeter (in a checkout: pip install -e .)")
