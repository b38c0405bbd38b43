"""``ragmeter runs`` takes ``--runs-dir`` as every other command does (the folder as an argument
still works), and show / report / diagnose look run names up there."""

from __future__ import annotations

from ragmeter.runs import list_runs


def test_runs_takes_runs_dir_as_the_other_commands_do(cli, warranty, runs_dir, tmp_path):
    assert cli("eval", warranty / "dataset.jsonl", "--name", "here").exit_code == 0
    (run,) = list_runs(runs_dir)
    by_option = cli("runs", "--runs-dir", runs_dir)
    assert by_option.exit_code == 0 and run.path.name in by_option.stdout
    by_argument = cli("runs", runs_dir)
    assert by_argument.stdout == by_option.stdout
    both = cli("runs", runs_dir, "--runs-dir", tmp_path / "elsewhere")
    assert both.exit_code == 2 and "two runs folders given" in both.output
    shown = cli("show", run.path.name, "--runs-dir", runs_dir)
    assert shown.exit_code == 0 and "precision@5" in shown.stdout
    assert cli("diagnose", run.path.name, "--runs-dir", runs_dir).exit_code == 0
    html = tmp_path / "r.html"
    assert cli("report", run.path.name, "--runs-dir", runs_dir, "--html", html).exit_code == 0 and html.is_file()
    missing = cli("show", run.path.name, "--runs-dir", tmp_path / "nowhere")
    assert missing.exit_code != 0 and str(tmp_path / "nowhere") in missing.output


def test_metrics_and_readme_name_the_article_not_the_seed(cli):
    """Users do not have "the seed article": its title is named, with its sources."""
    from tests import manual

    listing = cli("metrics").stdout
    assert "seed" not in listing.lower()
    assert "'RAG Evaluation Metrics: Formulas and a Worked Example' (TestMu AI)" in listing
    readme = manual.text()
    assert "seed article" not in readme and "the seed's" not in readme
    assert 'the article "RAG Evaluation Metrics: Formulas and a Worked Example" (TestMu AI' in " ".join(readme.split())


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
