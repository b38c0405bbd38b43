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
