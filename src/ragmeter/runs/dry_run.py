"""``eval --dry-run`` without the run: the judge calls, tokens and cost a run would need.

Nothing is called and nothing is written: the judge is a planning one
(:func:`~ragmeter.judges.judge_factory.planning_judge`: no API key needed, the ledger read
only where it exists), record sources get no cache file, and no run directory is made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragmeter.core.settings import InvalidSettingError, Settings
from ragmeter.engine.call_plan import dry_run_plan
from ragmeter.evidence.sources import build_sources
from ragmeter.judges.judge_factory import planning_judge
from ragmeter.runs.inputs import load_samples, run_measures, with_judge_chosen


def plan_evaluation(settings: Settings, *, resumed: bool = False,
                    notify: Callable[[str], None] | None = None) -> tuple[Settings, dict[str, Any]]:
    """The settings as planned (``auto`` resolved) and the plan of the run they describe.

    ``resumed``: the settings are a stored run's (its judge is already resolved)."""
    if settings.block is not None:
        raise InvalidSettingError("block", "a dry run loads the whole dataset: drop --block to plan it")
    settings, measures = with_judge_chosen(settings, resumed=resumed, notify=notify)
    judge = planning_judge(settings.judge_spec, settings)
    try:
        # the run's sources but the judge (a planning one), the embedder (no call is made) and the
        # record lookups' cache file (nothing is written)
        sources = build_sources(settings, judge=judge, embedder=None)
        measures = measures or run_measures(settings)  # a bad -m fails before the data is read
        data = load_samples(settings)
        price = settings.judge_price  # the flags, else the bundled snapshot's (core/prices.py)
        plan = dry_run_plan(data, measures, sources=sources, price_in=price.input if price else None,
                            price_out=price.output if price else None, concurrency=settings.concurrency)
        if price is not None and "estimated_usd_at_most" in plan:
            plan["prices"] = price.text()
    finally:
        if judge is not None:
            judge.ledger.close()
    return settings, plan
