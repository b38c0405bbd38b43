"""Bad input found once a run has started (a fact whose entity is blank) never leaves an
``interrupted`` run that ``runs`` offers to resume: a run directory holding nothing but its
setup is removed, as when bad input is refused before the run starts; one that holds saved
results is ``failed``, listed without the resume hint, and ``--resume`` refuses it. Other
stops (Ctrl-C, a judge that refuses the key) stay ``interrupted`` and resumable."""

from __future__ import annotations

import json

import pytest

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.settings import InvalidSettingError, Settings
from ragmeter.report.terminal import runs_table
from ragmeter.runs import list_runs, load_run
from ragmeter.runs.driver import run_evaluation
from ragmeter.runs.resume import resume_settings
from ragmeter.runs.store import mark_stopped, new_run_path, start_run

FACT = {"entity": " ", "attribute": "price", "value": "$89"}


def data(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps({"id": "s1", "question": "Price?", "answer": "The R2 costs $89.",
                                "retrieved": ["a", "b"], "relevant": ["a"], "metadata": {"facts": [FACT]}}) + "\n")
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"entity": "R2", "attribute": "price", "value": 99, "unit": "USD"}) + "\n")
    return str(path), str(records)


def settings(tmp_path, metrics):
    dataset, records = data(tmp_path)
    return Settings(dataset=dataset, records=records, metrics=metrics, judge="none",
                    runs_dir=str(tmp_path / "runs"), ledger=str(tmp_path / "ledger.sqlite"))


def test_a_rejected_fact_leaves_no_run_behind(tmp_path):
    told: list[str] = []
    with pytest.raises(InvalidInputError, match="metadata.facts"):
        run_evaluation(settings(tmp_path, ("record_accuracy",)), notify=told.append)
    assert list_runs(tmp_path / "runs", damaged=True) == []
    assert not any("--resume" in t for t in told)


def test_a_rejected_fact_after_saved_results_is_failed_and_not_resumable(tmp_path):
    told: list[str] = []
    with pytest.raises(InvalidInputError, match="metadata.facts"):
        run_evaluation(settings(tmp_path, ("precision", "record_accuracy")), notify=told.append)
    [run] = list_runs(tmp_path / "runs", damaged=True)
    assert run.status == "failed" and "metadata.facts" in run.setup["stopped_by"]
    listed = runs_table([run])
    assert "failed" in listed and "--resume" not in listed
    assert told and "fix the data" in told[-1] and "--resume" not in told[-1]
    with pytest.raises(InvalidSettingError, match="failed on its input"):
        resume_settings(load_run(run.path), {})


def test_other_stops_stay_interrupted(tmp_path):
    path = new_run_path(tmp_path, "x")
    setup = start_run(path, {"dataset": "d.jsonl"})
    assert mark_stopped(path, setup, KeyboardInterrupt()) == "interrupted"
    assert load_run(path).status == "interrupted"
    assert mark_stopped(path, setup, RuntimeError("judge gone")) == "interrupted"
