"""The dry run says what its time rests on: per prompt, the seconds per call it assumes and where
the figure comes from (this judge's own past calls in the ledger, else the bundled local judge's
measured figure). It said 80.6 s for a run that took 1,258 s, and not why."""

from __future__ import annotations

import json

from ragmeter.engine.call_plan import time_estimate
from ragmeter.judges import Judge, NoCallBackend
from ragmeter.ledger import Ledger


def _put(ledger: Ledger, key: str, prompt: str, latency: float, calls: int = 1, backend: str = "openai") -> None:
    ledger.put(key=key, backend=backend, model="m", decoding={}, prompt_id=prompt, prompt_hash="h", schema_hash="s",
               input_hash=key, status="ok", parsed={}, raw="{}", error=None, input_tokens=10, output_tokens=5,
               latency_s=latency, calls=calls, reasks=calls - 1)


def test_past_calls_in_the_ledger_give_the_figure(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    for i, (latency, calls) in enumerate([(30.0, 1), (50.0, 1), (80.0, 2), (1.0, 1)]):  # per call: 30, 50, 40, 1
        _put(ledger, f"k{i}", "claims.extract", latency, calls)
    _put(ledger, "other", "claims.extract", 999.0, backend="anthropic")  # another judge's: not used
    judge = Judge(NoCallBackend("openai", "m"), ledger=ledger)
    out = time_estimate({"claims.extract": 4, "claims.verify": 2}, judge, concurrency=2)
    assert out["seconds_per_call"] == {"claims.extract": {"seconds": 35.0, "from": "median of this judge's 4 past "
                                                                                   "call(s) in the ledger"}}
    assert out["estimated_seconds"] == 35.0 * 4 / 2
    assert out["time_note"].startswith("2 calls in flight at once; ")
    assert out["not_timed"] == ["claims.verify"]


def test_the_local_judge_without_history_names_its_bundled_figures():
    out = time_estimate({"claims.extract": 1, "claims.verify": 2}, Judge(NoCallBackend("local", "m")), concurrency=8)
    assert out["estimated_seconds"] == 14.0 + 2 * 4.1  # one call at a time, whatever --concurrency says
    assert out["seconds_per_call"]["claims.verify"]["from"].startswith("bundled figure: 2 cores")
    assert out["time_note"].startswith("one call at a time; ")
    assert time_estimate({"claims.extract": 1}, Judge(NoCallBackend("openai", "m"))) == {}  # nothing to go on


def test_the_cli_dry_run_prints_what_it_assumes(cli, warranty, seed_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    ledger = tmp_path / "l.sqlite"
    judge = ("--judge", "openai:m", "--judge-base-url", seed_server.url + "/v1", "--ledger", ledger)
    assert cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
               *judge).exit_code == 0
    rows = [json.loads(x) for x in (warranty / "dataset.jsonl").read_text().splitlines()]
    rows[0]["answer"] = rows[0]["answer"] + " Call us any time."  # new calls, same judge
    changed = tmp_path / "d.jsonl"
    changed.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = cli("eval", changed, "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness", "--dry-run", *judge)
    assert out.exit_code == 0, out.output
    assert "estimated time: about " in out.stdout and "(8 calls in flight at once; " in out.stdout
    assert "  assumes " in out.stdout
    assert "s per claims.extract call (median of this judge's 1 past call(s) in the ledger)" in out.stdout


def test_dry_run_counts_the_verification_prompts_tokens(warranty):
    """Verification prompts send the passages and the claims; the estimate used to count only
    extraction (386 tokens for faithfulness, and the same for faithfulness + context recall)."""
    from ragmeter import load_dataset
    from ragmeter.engine.call_plan import dry_run_plan
    from ragmeter.engine.evaluate import resolve_measures
    from ragmeter.evidence.sources import Sources
    from ragmeter.judges import Judge
    from ragmeter.judges.backends import ScriptedBackend
    from tests import seed_judge

    data = load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")  # q1 alone is answered
    judge = Judge(ScriptedBackend(seed_judge.scripted))
    extract, faith, both = (dry_run_plan(data, resolve_measures(m, 5), sources=Sources(judge=judge))
                            for m in (["answer_relevancy"], ["faithfulness"], ["faithfulness", "context_recall"]))
    q1 = next(s for s in data.samples if s.id == "q1")
    passages = sum(len(c.text or "") for c in q1.retrieved) // 4
    assert faith["calls"] == 2 and both["calls"] == 3
    assert faith["estimated_input_tokens"] >= extract["estimated_input_tokens"] + passages
    assert both["estimated_input_tokens"] >= faith["estimated_input_tokens"] + passages
    assert faith["calls_by_prompt"] == {"claims.extract": 1, "claims.verify": 1}


def test_dry_run_of_the_local_judge_estimates_its_time(warranty):
    from ragmeter import load_dataset
    from ragmeter.engine.call_plan import dry_run_plan
    from ragmeter.engine.evaluate import resolve_measures
    from ragmeter.evidence.sources import Sources
    from ragmeter.judges import Judge
    from ragmeter.judges.backends import ScriptedBackend
    from ragmeter.judges.local.agreement import SECONDS_PER_CALL
    from tests import seed_judge

    data = load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    plan = dry_run_plan(data, resolve_measures(["faithfulness", "context_recall"], 5),
                        sources=Sources(judge=Judge(ScriptedBackend(seed_judge.scripted, name="local"))))
    expected = SECONDS_PER_CALL["claims.extract"] + 2 * SECONDS_PER_CALL["claims.verify"]
    assert plan["estimated_seconds"] == round(expected, 1)
    # the note says what the figure rests on now, per prompt (issue 31; tests/engine/test_call_plan.py)
    assert "seconds per call vary" in plan["time_note"]
    assert plan["seconds_per_call"]["claims.verify"]["from"].startswith("bundled figure: ")


def _offline(stages: list[str]) -> Judge:
    backend = NoCallBackend("local", "offline evidence + Qwen2.5-Coder-1.5B-Instruct Q4_K_M")
    backend.key_extra = {"stages": stages}  # as the planning judge copies the real backend's
    return Judge(backend)


def test_the_offline_judge_has_its_own_figures_a_verification_by_its_tokens():
    """Trial 2, item 9: the dry run of --judge local assumed the old model judge's 14.0 s per
    extraction (about 66.6 s for a run that took 3 s)."""
    from ragmeter.engine.call_plan import OFFLINE_SECONDS_PER_CALL, OFFLINE_SECONDS_PER_TOKEN

    out = time_estimate({"claims.extract": 2, "claims.verify": 4}, _offline(["evidence"]),
                        tokens_by_prompt={"claims.extract": 800, "claims.verify": 6000})
    per_verify = round(OFFLINE_SECONDS_PER_TOKEN["claims.verify"] * 6000 / 4, 1)
    assert out["seconds_per_call"]["claims.extract"]["seconds"] == OFFLINE_SECONDS_PER_CALL["claims.extract"]
    assert out["seconds_per_call"]["claims.verify"]["seconds"] == per_verify
    assert "1,000 input tokens (6,000 here), the offline judge" in out["seconds_per_call"]["claims.verify"]["from"]
    assert out["estimated_seconds"] == round(2 * OFFLINE_SECONDS_PER_CALL["claims.extract"] + 4 * per_verify, 1)
    no_tokens = time_estimate({"claims.verify": 1}, _offline(["evidence"]))  # called without them
    assert no_tokens["seconds_per_call"]["claims.verify"]["seconds"] == OFFLINE_SECONDS_PER_CALL["claims.verify"]


def test_the_offline_judges_model_stage_is_timed_by_its_own_figure():
    """The stage was timed by the old model judge's verification figure; now by its own (warranty
    q1: 4 verifications in 17.3 s at load 1.3)."""
    from ragmeter.engine.call_plan import MODEL_STAGE_SECONDS_PER_VERIFY

    out = time_estimate({"claims.verify": 4}, _offline(["evidence", "model"]), tokens_by_prompt={"claims.verify": 500})
    assert out["seconds_per_call"]["claims.verify"]["seconds"] == MODEL_STAGE_SECONDS_PER_VERIFY == 4.3
    assert "the offline judge with its model stage, warranty q1" in out["seconds_per_call"]["claims.verify"]["from"]
    assert out["estimated_seconds"] == round(4 * 4.3, 1)


def test_the_offline_judges_context_relevance_is_timed_by_the_models_figure():
    """Issue 37's trial: the dry run left context relevance untimed for --judge local."""
    from ragmeter.engine.call_plan import MODEL_SECONDS_PER_CALL

    out = time_estimate({"context.relevance": 6}, _offline(["evidence"]))
    assert out["seconds_per_call"]["context.relevance"]["seconds"] == MODEL_SECONDS_PER_CALL["context.relevance"]
    assert "not_timed" not in out and out["estimated_seconds"] == round(
        6 * MODEL_SECONDS_PER_CALL["context.relevance"], 1)


def test_the_cli_dry_run_of_the_offline_judge_uses_its_figures(cli, warranty, tmp_path):
    import pytest

    pytest.importorskip("onnxruntime")
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
              "--judge", "local", "--dry-run", "--ledger", tmp_path / "none.sqlite")
    assert out.exit_code == 0, out.output
    assert "  assumes 0.2 s per claims.extract call (bundled figure: the offline judge on 2 cores" in out.stdout
    assert "s per claims.verify call (bundled figure: 2 s per 1,000 input tokens (" in out.stdout
    assert "14.0 s" not in out.stdout
