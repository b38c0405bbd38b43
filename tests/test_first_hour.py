"""Issue 23, what a newcomer meets in the first hour: run names, --version, help text, crashed
runs, and gate/compare output that gives the numbers behind a verdict."""

from __future__ import annotations

import json
import subprocess
import sys

import typer.main

from ragmeter.runs import list_runs, load_run

from .test_compare_gate import make_run


def test_show_takes_the_name_that_runs_prints(cli, warranty, runs_dir, monkeypatch):
    assert cli("eval", warranty / "dataset.jsonl").exit_code == 0
    monkeypatch.setenv("RAGMETER_RUNS_DIR", str(runs_dir))
    listed = cli("runs", runs_dir).stdout
    (run,) = list_runs(runs_dir)
    assert run.name in listed
    out = cli("show", run.name)  # the bare name, as `ragmeter runs` prints it
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith(f"run {run.name}: complete")
    assert cli("report", run.name, "--html", runs_dir / "r.html").exit_code == 0


def test_a_name_that_is_no_run_says_where_it_looked(cli, runs_dir, monkeypatch):
    monkeypatch.setenv("RAGMETER_RUNS_DIR", str(runs_dir))
    out = cli("show", "no-such-run")
    assert out.exit_code == 2 and "ragmeter runs" in out.stderr and str(runs_dir) in out.stderr


def test_version_flag(cli):
    from ragmeter._version import __version__

    out = cli("--version")
    assert out.exit_code == 0 and out.stdout.strip() == f"ragmeter {__version__}"


def test_help_keeps_the_extras_brackets_and_every_option_has_help(cli):
    """Rich markup would read `[local]` as a style tag and print `ragmeter` alone."""
    text = " ".join(cli("eval", "--help").stdout.split())
    assert "ragmeter[local]" in text and "ragmeter[ray]" in text
    from ragmeter.cli.main import app

    command = typer.main.get_command(app)
    undocumented = [(name, p.opts) for name, sub in command.commands.items()  # type: ignore[attr-defined]
                    for p in sub.params if p.param_type_name == "option" and not getattr(p, "help", None)]
    assert undocumented == []


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_crashed_run_is_listed_as_interrupted_with_how_to_finish_it(cli, warranty, runs_dir, monkeypatch):
    assert cli("eval", warranty / "dataset.jsonl").exit_code == 0
    (run,) = list_runs(runs_dir)
    setup = json.loads((run.path / "setup.json").read_text())
    setup.update(status="running", pid=_dead_pid())
    (run.path / "setup.json").write_text(json.dumps(setup))
    assert load_run(run.path).status == "interrupted"
    listed = cli("runs", runs_dir).stdout
    # runs_dir is not the default folder (./runs), so the name alone would not be found: the path
    assert "interrupted" in listed and f"ragmeter eval --resume {run.path}`" in listed
    assert cli("show", run.path).stdout.startswith(f"run {run.name}: interrupted")
    monkeypatch.setenv("RAGMETER_RUNS_DIR", str(runs_dir))  # the default folder: the name is enough
    assert f"ragmeter eval --resume {run.name}`" in cli("runs", runs_dir).stdout
    # a run whose process is alive (this one) stays running
    setup.update(pid=__import__("os").getpid())
    (run.path / "setup.json").write_text(json.dumps(setup))
    assert load_run(run.path).status == "running"


def test_resume_marks_the_run_as_this_process_and_completes_it(cli, warranty, runs_dir):
    assert cli("eval", warranty / "dataset.jsonl").exit_code == 0
    (run,) = list_runs(runs_dir)
    setup = json.loads((run.path / "setup.json").read_text())
    setup.update(status="running", pid=_dead_pid())
    (run.path / "setup.json").write_text(json.dumps(setup))
    assert cli("eval", "--resume", run.path).exit_code == 0
    assert load_run(run.path).status == "complete"


def test_gate_text_gives_the_numbers_and_says_not_significant(cli, tmp_path):
    """The issue's case: nDCG fell from 0.794 to 0.628 on 6 queries; nothing is significant."""
    base = [1.0, 1.0, 0.387, 1.0, 0.5, 0.877]
    new = [0.498, 1.0, 0.387, 1.0, 0.0, 0.885]
    a = make_run(tmp_path / "a", {"ndcg@5": base, "mrr@5": [1.0] * 6})
    b = make_run(tmp_path / "b", {"ndcg@5": new, "hit_rate@5": [1.0] * 6})
    out = cli("gate", b.path, "--baseline", a.path)
    assert out.exit_code == 0, out.output
    mean_a, mean_b = sum(base) / 6, sum(new) / 6
    assert f"ndcg@5: {mean_a:.3f} -> {mean_b:.3f} ({mean_b - mean_a:+.3f}, n=6), not significant" in out.stdout
    (line,) = [x for x in out.stdout.splitlines() if x.strip().startswith("ndcg@5:")]
    assert line.count("n=6") == 1, line  # n is said once, beside the change
    assert "fails the gate only when it is significant" in out.stdout
    assert "not gated, held by one run only: baseline mrr@5; run hit_rate@5" in out.stdout


def test_compare_names_the_metrics_only_one_run_holds(cli, tmp_path):
    a = make_run(tmp_path / "a", {"ndcg@5": [0.5, 1.0], "mrr@5": [1.0, 1.0]})
    b = make_run(tmp_path / "b", {"ndcg@5": [0.5, 0.5], "hit_rate@5": [1.0, 1.0]})
    out = cli("compare", a.path, b.path)
    assert out.exit_code == 0, out.output
    assert "not compared, held by one run only: in A mrr@5; in B hit_rate@5" in out.stdout
    doc = json.loads(cli("compare", a.path, b.path, "--format", "json").stdout)
    assert doc["metrics_only_in_a"] == ["mrr@5"] and doc["metrics_only_in_b"] == ["hit_rate@5"]


def test_dry_run_counts_the_verification_prompts_tokens(warranty):
    """Verification prompts send the passages and the claims; the estimate used to count only
    extraction (386 tokens for faithfulness, and the same for faithfulness + context recall)."""
    from ragmeter import load_dataset
    from ragmeter.engine.call_plan import dry_run_plan
    from ragmeter.engine.evaluate import resolve_measures
    from ragmeter.evidence.sources import Sources
    from ragmeter.judges import Judge
    from ragmeter.judges.backends import ScriptedBackend

    from . import seed_judge

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
    from ragmeter.judges.local_agreement import SECONDS_PER_CALL

    from . import seed_judge

    data = load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    plan = dry_run_plan(data, resolve_measures(["faithfulness", "context_recall"], 5),
                        sources=Sources(judge=Judge(ScriptedBackend(seed_judge.scripted, name="local"))))
    expected = SECONDS_PER_CALL["claims.extract"] + 2 * SECONDS_PER_CALL["claims.verify"]
    assert plan["estimated_seconds"] == round(expected, 1)
    # the note says what the figure rests on now, per prompt (issue 31; tests/engine/test_dry_run.py)
    assert "seconds per call vary" in plan["time_note"]
    assert plan["seconds_per_call"]["claims.verify"]["from"].startswith("bundled figure: ")


def test_readme_says_where_the_second_copy_of_the_model_is_and_how_to_remove_it():
    """The model is installed as parts and assembled into the cache: README names the file the
    loader writes and the command that removes it."""
    from ragmeter.judges.local_model import BUNDLED_NAME, BUNDLED_SIZE, PART_PACKAGE

    from .conftest import ROOT

    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"~/.cache/ragmeter/models/{BUNDLED_NAME}" in readme
    assert "rm -r ~/.cache/ragmeter/models" in readme and PART_PACKAGE.split("{")[0] in readme
    assert f"{BUNDLED_SIZE / 1e9:.1f} GB assembled" in readme and "2.2 GB in all" in readme


def test_a_dataset_with_nothing_retrieved_says_why_its_rank_metrics_are_0(cli, warranty, tmp_path):
    """Questions imported without a run (or a generated test set) have no retrieved lists: every
    rank metric is 0, and the command says why and what to give, instead of a silent table of 0s."""
    data = tmp_path / "questions.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "R2 warranty?", "relevant": {"d1": 1}}) + "\n")
    out = cli("eval", data, "--no-save")
    assert out.exit_code == 0, out.output
    assert "precision@5 0.000" in out.stdout
    assert "no sample has a retrieved list" in out.stderr and "ragmeter.evaluate_retriever" in out.stderr
    assert "retrieved list" not in cli("eval", warranty / "dataset.jsonl", "--no-save").stderr


def test_report_into_a_missing_folder_is_one_error_line(cli, warranty, runs_dir, tmp_path):
    """`report RUN --html no/such/dir/r.html` was a FileNotFoundError traceback."""
    assert cli("eval", warranty / "dataset.jsonl").exit_code == 0
    (run,) = list_runs(runs_dir)
    target = tmp_path / "no" / "such" / "r.html"
    out = cli("report", run.path, "--html", target)
    assert out.exit_code == 2
    assert out.stderr.strip() == (f"error: {target}: cannot write the report (No such file or directory). "
                                  "Fix: give --html a file in a folder that exists and can be written")
    good = tmp_path / "r.html"
    assert cli("report", run.path, "--html", good).exit_code == 0 and good.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # nothing left beside it


def test_written_outputs_get_the_umask_mode_not_0600(tmp_path):
    """An imported dataset, a test set, a labels export or a report is a file to share:
    mkstemp's 0600 made them unreadable to anyone else."""
    import os
    from pathlib import Path

    from ragmeter.io.writer import write_jsonl, write_output

    old = os.umask(0o022)
    try:
        write_jsonl(Path(tmp_path / "d.jsonl"), [{"id": "1"}])
        write_output(tmp_path / "r.html", "<!DOCTYPE html>", what="report", option="--html")
    finally:
        os.umask(old)
    assert {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == {"d.jsonl": 0o644, "r.html": 0o644}
