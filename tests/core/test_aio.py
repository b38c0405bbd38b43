"""``ragmeter.core.aio``: Running ragmeter's async core from synchronous code, also where an event loop
is already running (a Jupyter notebook, an async web app)."""

from __future__ import annotations

import asyncio

import pytest

import ragmeter
from ragmeter import evaluate
from tests.engine.test_evaluate import q1


def test_judged_evaluate_inside_a_running_event_loop(judged_env):
    """What a notebook does: the sync call inside a running loop, and the async one awaited."""

    async def notebook_cell():
        sync = evaluate(q1(), "faithfulness", judge="openai:judge-model")
        awaited = await ragmeter.aevaluate(q1(), "faithfulness", judge="openai:judge-model")
        return sync, awaited

    sync, awaited = asyncio.run(notebook_cell())
    assert sync.values("faithfulness") == awaited.values("faithfulness") == [pytest.approx(3 / 5)]
    assert sync.judge_stats["calls"] > 0 and awaited.judge_stats["calls"] == 0  # the ledger, across both


def test_a_judge_made_outside_the_loop_works_inside_it(judged_env, tmp_path):
    """A notebook makes its judge in one cell and evaluates in another: the judge's ledger and
    limiter were made outside the loop that the evaluation runs on."""
    from ragmeter.core.settings import Settings
    from ragmeter.judges.judge_factory import make_judge

    judge = make_judge("openai:judge-model", Settings(), ledger=str(tmp_path / "own.sqlite"))

    async def cells():
        first = evaluate(q1(), "faithfulness", judge=judge)
        calls = judged_env.count
        second = await ragmeter.aevaluate(q1(), "faithfulness", judge=judge)
        return first, second, calls

    first, second, calls = asyncio.run(cells())
    assert first.values("faithfulness") == second.values("faithfulness") == [pytest.approx(3 / 5)]
    assert calls > 0 and judged_env.count == calls  # the second call: every judgment from the ledger
