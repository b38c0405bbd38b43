"""``report/plan.py``: a dry run's plan for a person."""

from __future__ import annotations


def test_dry_run_text_gives_the_local_judges_time():
    from ragmeter.report.plan import dry_run_text

    text = dry_run_text({"calls": 3, "estimated_input_tokens": 900, "max_output_tokens": 6144,
                         "calls_by_prompt": {"claims.extract": 1, "claims.verify": 2}, "note": "n",
                         "estimated_seconds": 22.2, "time_note": "rough", "not_timed": ["rubric.grade"]})
    # the line names no judge now (a served judge's past latencies give one too) and each figure
    # it rests on is listed (tests/engine/test_call_plan.py)
    assert "estimated time: about 22.2 s (rough)" in text
    assert "not timed (left out of the estimate): rubric.grade" in text


def test_the_offline_judges_plan_says_judgments_and_no_tokens():
    """The new-user trial: the offline judge's dry run quoted input tokens and an output cap for
    a judge that spends none."""
    from ragmeter.report.plan import dry_run_text

    plan = {"calls": 5, "estimated_input_tokens": 2052, "max_output_tokens": 10240, "judge_backend": "local",
            "calls_by_prompt": {"claims.extract": 1, "claims.verify": 4}, "estimated_seconds": 3.4}
    offline = dry_run_text({**plan, "judge_offline": True})
    assert offline.startswith("dry run: 5 judgments needed (none made)") and "tokens" not in offline
    assert "estimated time: about 3.4 s" in offline
    model_judge = dry_run_text(plan)  # local:<file.gguf> alone: a model's calls, whose tokens are its time
    assert model_judge.startswith("dry run: 5 judge calls needed") and "estimated input tokens: 2052" in model_judge
