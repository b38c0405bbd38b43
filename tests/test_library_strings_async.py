"""Issue 18: the library takes the strings its CLI takes, and works inside a running event loop.

- ``evaluate(d, "ndcg@5")`` said "unknown metric 'n'" (the string was iterated letter by letter);
- ``judge="openai:<model>"`` raised AttributeError;
- every judged ``evaluate`` in a notebook (a loop already running) raised "asyncio.run() cannot
  be called from a running event loop";
- a result's repr was 12,478 characters for 6 samples.
"""

from __future__ import annotations

import asyncio

import pytest

import ragmeter
from ragmeter import evaluate, load_dataset, make_measure

from .conftest import WARRANTY


@pytest.fixture
def judged_env(seed_server, tmp_path, monkeypatch):
    """``openai:<model>`` pointed at the HTTP test judge (the seed's q1 verdicts); the ledger
    goes to a temporary runs directory."""
    monkeypatch.setenv("OPENAI_BASE_URL", seed_server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("RAGMETER_RUNS_DIR", str(tmp_path / "runs"))
    return seed_server


def q1():
    data = load_dataset(WARRANTY / "dataset.jsonl", corpus=WARRANTY / "corpus.jsonl")
    return [s for s in data if s.id == "q1"]


def test_metric_strings_lists_and_whole_list_k():
    path = WARRANTY / "dataset.jsonl"
    one = evaluate(path, "ndcg@5")
    assert one.metric_names == ["ndcg@5"] and one.summary("ndcg").mean == pytest.approx(0.628, abs=5e-4)
    both = evaluate(path, "precision@5, mrr,ndcg(discount='jk2002', base=2.0)@5")
    assert both.metric_names == ["precision@5", "reciprocal_rank@5", "ndcg(discount='jk2002')@5"]
    assert evaluate(path, ["mrr"]).means() == evaluate(path, "mrr").means() == {"reciprocal_rank@5": both.means()[
        "reciprocal_rank@5"]}
    # k=None: the whole list. q3's only relevant chunk is at rank 5: RR 1/5 whole, 0 at k=3
    assert evaluate(path, "mrr", k=None).outcome("mrr", "q3").value == 1 / 5
    assert evaluate(path, "mrr", k=3).outcome("mrr", "q3").value == 0.0
    with pytest.raises(ragmeter.InvalidParameterError, match="each item must be a metric name"):
        evaluate(path, [3])


def test_a_judge_spec_string(judged_env):
    r = evaluate(q1(), "faithfulness,context_recall", judge="openai:judge-model")
    assert r.summary("faithfulness").mean == pytest.approx(3 / 5)  # the seed: S, S, S, C, N
    assert r.summary("context_recall").mean == pytest.approx(4 / 5)
    assert r.judge_stats is not None and r.judge_stats["calls"] == judged_env.count > 0
    again = evaluate(q1(), "faithfulness", judge="openai:judge-model")  # the ledger in $RAGMETER_RUNS_DIR
    assert again.judge_stats["calls"] == 0 and again.summary("faithfulness").mean == pytest.approx(3 / 5)


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


def test_a_result_repr_is_short_and_its_html_a_table():
    r = evaluate(WARRANTY / "dataset.jsonl", "precision,recall,hit_rate,mrr,ndcg")
    text = repr(r)
    assert len(text) < 200, text
    assert text.startswith("EvaluationResult(6 samples; precision@5 0.300, recall@5 0.778")
    page = r._repr_html_()
    assert page.count("<tr>") == 1 + 5 and "95% interval" in page and "0.617" in page
    ten = evaluate(WARRANTY / "dataset.jsonl", "precision@1,precision@2,precision@3,recall@1,recall@2,recall@3,mrr")
    assert "+1 more" in repr(ten)


def test_measure_html_and_repr():
    m = make_measure("contradiction_rate")
    assert repr(m) == "contradiction_rate"
    page = m._repr_html_()
    assert "lower" in page and "definition" in page


def test_notebook_progress_updates_one_line_per_stage():
    from ragmeter.core.notebook import NotebookProgress, in_notebook

    shown: list[str] = []

    class Handle:
        def update(self, obj):
            shown.append(repr(obj))

    def display(obj, display_id):
        assert display_id is True
        shown.append(repr(obj))
        return Handle()

    now = iter(range(100))
    p = NotebookProgress(display, clock=lambda: float(next(now)))
    p.start("verifying claims", 2)
    p.advance(0)
    p.advance(1)
    assert shown[0].startswith("verifying claims: 0/2 (0%)") and shown[-1].startswith("verifying claims: 2/2 (100%)")
    assert not in_notebook()  # pytest is not a Jupyter kernel: no display is attempted here
