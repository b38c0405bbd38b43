"""``--dry-run``: the judge calls and tokens a run needs, with no call made.

Also whether a run needs a judge at all, which decides if ``auto`` picks the bundled one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.core.measure import Measure
from ragmeter.core.settings import InvalidSettingError
from ragmeter.io.dataset import Dataset
from ragmeter.metrics.kinds import JudgedSpec

if TYPE_CHECKING:  # whether a run needs a judge is asked on every run: it loads no judge code
    from ragmeter.evidence.sources import Sources


def judged_measures(measures: Iterable[Measure]) -> list[Measure]:
    """The measures that read judgments."""
    return [m for m in measures if isinstance(m.spec, JudgedSpec)]


def needs_judge(measures: Iterable[Measure]) -> bool:
    """Whether any of the (resolved) measures reads judgments.

    >>> from ragmeter.engine.evaluate import resolve_measures
    >>> needs_judge(resolve_measures(["ndcg@5", "faithfulness"], 5)), needs_judge(resolve_measures(None, 5))
    (True, False)
    """
    return bool(judged_measures(measures))


def dry_run_plan(data: Dataset, measures: Sequence[Measure], *, sources: Sources, price_in: float | None = None,
                 price_out: float | None = None) -> dict[str, Any]:
    """The judge calls, estimated input tokens and output cap the judged measures need
    (``{"calls": 0, "note": ...}`` without one); raises when they need a judge and
    ``sources`` has none (a planning judge: no call is made).

    With a price (USD per million tokens), ``estimated_usd_at_most``: the estimated input
    tokens at ``price_in`` plus the output cap at ``price_out`` (:func:`ragmeter.judges.cost.usd`)."""
    measures = judged_measures(measures)
    if not measures:
        return {"calls": 0, "note": "no judged metric requested"}
    judge = sources.judge
    if judge is None:
        raise InvalidSettingError("dry_run", "a dry run of judged metrics needs --judge")
    from ragmeter.evidence.planner import plan_calls

    needs: set[str] = set().union(*(m.spec.needs(m) for m in measures if isinstance(m.spec, JudgedSpec)))
    plan = plan_calls(data.samples, needs, sources)
    if judge.backend.name == "local":
        plan.update(local_time_estimate(plan["calls_by_prompt"]))
    if price_in is not None or price_out is not None:
        from ragmeter.judges.cost import usd

        plan["estimated_usd_at_most"] = round(usd(plan["estimated_input_tokens"], plan["max_output_tokens"],
                                                  price_in, price_out), 6)
    return plan


def local_time_estimate(calls_by_prompt: dict[str, int]) -> dict[str, Any]:
    """The local judge's time for these calls, from its measured seconds per call; prompts it
    was not timed on are named, not guessed.

    >>> local_time_estimate({"claims.extract": 1, "claims.verify": 2})["estimated_seconds"]
    22.2
    """
    from ragmeter.judges.local_agreement import SECONDS_MEASURED_ON, SECONDS_PER_CALL

    timed = {p: n for p, n in calls_by_prompt.items() if p in SECONDS_PER_CALL}
    out: dict[str, Any] = {
        "estimated_seconds": round(sum(SECONDS_PER_CALL[p] * n for p, n in timed.items()), 1),
        "time_note": f"rough: seconds per call measured on {SECONDS_MEASURED_ON}; a slower or busier CPU takes longer",
    }
    untimed = sorted(set(calls_by_prompt) - set(timed))
    if untimed:
        out["not_timed"] = untimed
    return out
