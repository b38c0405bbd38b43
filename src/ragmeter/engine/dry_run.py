"""``--dry-run``: the judge calls and tokens a run needs, with no call made.

Also whether a run needs a judge at all, which decides if ``auto`` picks the bundled one.
"""

from __future__ import annotations

from typing import Any, Iterable

from ragmeter.actions.criteria import CriteriaSet
from ragmeter.core.measure import Measure
from ragmeter.core.settings import InvalidSettingError
from ragmeter.engine.evaluate import resolve_measures
from ragmeter.engine.planner import plan_calls
from ragmeter.io.dataset import Dataset
from ragmeter.judges.judge import Judge
from ragmeter.metrics.kinds import JudgedSpec
from ragmeter.records.lookup import RecordLookup


def judged_measures(metrics: Iterable[str | Measure] | None, k: int | None, view: str | None) -> list[Measure]:
    """The requested measures that read judgments (see :func:`resolve_measures` for k and view)."""
    return [m for m in resolve_measures(metrics, k, view=view) if isinstance(m.spec, JudgedSpec)]


def needs_judge(metrics: Iterable[str | Measure] | None, k: int | None, view: str | None) -> bool:
    """Whether any requested measure reads judgments.

    >>> needs_judge(["ndcg@5", "faithfulness"], 5, None), needs_judge(None, 5, None)
    (True, False)
    """
    return bool(judged_measures(metrics, k, view))


def dry_run_plan(data: Dataset, metrics: Iterable[str | Measure] | None, *, k: int | None, view: str | None,
                 judge: Judge | None, records: RecordLookup | None = None,
                 action_criteria: CriteriaSet | None = None) -> dict[str, Any]:
    """The judge calls, estimated input tokens and output cap the judged measures need
    (``{"calls": 0, "note": ...}`` without one); raises when they need a judge and none is given."""
    measures = judged_measures(metrics, k, view)
    if not measures:
        return {"calls": 0, "note": "no judged metric requested"}
    if judge is None:
        raise InvalidSettingError("dry_run", "a dry run of judged metrics needs --judge")
    needs: set[str] = set().union(*(m.spec.needs(m) for m in measures if isinstance(m.spec, JudgedSpec)))
    return plan_calls(data.samples, needs, judge, records=records, action_criteria=action_criteria)
