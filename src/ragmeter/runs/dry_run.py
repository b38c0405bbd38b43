"""``eval --dry-run`` without the run: the judge calls, tokens and cost a run would need.

Nothing is called and nothing is written: the judge is a planning one
(:func:`~ragmeter.judges.judge_factory.planning_judge`: no API key needed, the ledger read
only where it exists), record sources get no cache file, and no run directory is made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragmeter.core.settings import AUTO_JUDGE, InvalidSettingError, Settings
from ragmeter.engine.call_plan import dry_run_plan
from ragmeter.evidence.sources import Sources
from ragmeter.judges.judge_factory import planning_judge
from ragmeter.runs.inputs import action_criteria, load_samples, resolve_judge, run_measures, uncached_record_lookup


def plan_evaluation(settings: Settings, *, resumed: bool = False,
                    notify: Callable[[str], None] | None = None) -> tuple[Settings, dict[str, Any]]:
    """The settings as planned (``auto`` resolved) and the plan of the run they describe.

    ``resumed``: the settings are a stored run's (its judge is already resolved)."""
    if settings.block is not None:
        raise InvalidSettingError("block", "a dry run loads the whole dataset: drop --block to plan it")
    measures = None
    if not resumed and settings.judge == AUTO_JUDGE:  # auto turns on whether a measure is judged
        measures = run_measures(settings)
        settings = resolve_judge(settings, measures, notify)
    judge = planning_judge(settings.judge_spec, settings)
    actions = action_criteria(settings)
    measures = measures or run_measures(settings)  # a bad -m fails before the data is read
    try:
        data = load_samples(settings)
        sources = Sources(judge=judge, records=uncached_record_lookup(settings), action_criteria=actions)
        price = settings.judge_price  # the flags, else the bundled snapshot's (core/prices.py)
        plan = dry_run_plan(data, measures, sources=sources, price_in=price.input if price else None,
                            price_out=price.output if price else None, concurrency=settings.concurrency)
        if price is not None and "estimated_usd_at_most" in plan:
            plan["prices"] = price.text()
    finally:
        if judge is not None:
            judge.ledger.close()
    return settings, plan
