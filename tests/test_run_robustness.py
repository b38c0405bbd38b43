"""Run directories under a hostile world: damaged files are located, bad input leaves nothing,
storage failures are typed, resume works from anywhere and honours or refuses its options,
no run is left ``running`` after an error, label results survive a judge failure, and no
credential reaches a run file."""

from __future__ import annotations

import errno
import json
import shutil
import sqlite3

import pytest

from ragmeter.core.errors import StorageError
from ragmeter.ledger import Ledger
from ragmeter.runs import list_runs, load_run

LABEL = "recall,ndcg"
JUDGED_ARGS = ("--metrics", "recall,faithfulness", "--judge", "openai:m", "--concurrency", "1")


def _runs(runs_dir):
    return sorted(p for p in runs_dir.iterdir() if p.is_dir()) if runs_dir.exists() else []


@pytest.fixture
def four_runs(cli, warranty, runs_dir):
    for name in ("a", "b", "c", "d"):
        assert cli("eval", warranty / "dataset.jsonl", "-m", LABEL, "--name", name).exit_code == 0
    return dict(zip("abcd", _runs(runs_dir)))


def test_damaged_runs_are_listed_with_file_and_line_and_every_command_says_where(cli, four_runs, runs_dir, tmp_path):
    a, b, c, good = four_runs["a"], four_runs["b"], four_runs["c"], four_runs["d"]
    results = (a / "results.jsonl").read_text()
    torn = results[: len(results) // 2]
    assert not torn.endswith("\n")
    (a / "results.jsonl").write_text(torn)  # torn in the middle of a line
    line = f"results.jsonl, line {torn.count(chr(10)) + 1}"
    (b / "setup.json").write_text('{"status": "complete", "options": ')
    (c / "summary.json").write_text(json.dumps({"recall@5": {"mean": "high"}}))
    listed = cli("runs", runs_dir)
    assert listed.exit_code == 0 and good.name in listed.stdout
    out = " ".join(listed.stdout.split())
    for run in (a, b, c):
        assert run.name in out
    assert out.count(" damaged - ") == 3 and line in out and "setup.json, line 1" in out
    for run, where in ((a, line), (b, "setup.json, line 1"), (c, "summary.json")):
        for args in (("show", run), ("report", run, "--html", tmp_path / "r.html"), ("diagnose", run),
                     ("compare", good, run), ("gate", run, "--baseline", good)):
            res = cli(*args)
            assert res.exit_code == 2, (args, res.output)
            assert where in res.output and "damaged" in res.output and "JSONDecodeError" not in res.output


def test_a_torn_last_line_of_an_unfinished_run_is_trimmed(four_runs):
    run = four_runs["a"]
    setup = json.loads((run / "setup.json").read_text())
    (run / "setup.json").write_text(json.dumps({**setup, "status": "running"}))
    (run / "results.jsonl").write_text((run / "results.jsonl").read_text() + '{"id": "q7", "metr')
    (run / "samples.jsonl").write_text((run / "samples.jsonl").read_text() + '{"id": "q7", "retr')
    assert len(load_run(run).results) == 6 and len(load_run(run).samples()) == 6


@pytest.mark.parametrize("args", [("--metrics", "bogus"), ("--k", "-1"), ("--judge", "nope:x")])
def test_rejected_options_leave_no_run_directory(cli, warranty, runs_dir, args):
    res = cli("eval", warranty / "dataset.jsonl", *args)
    assert res.exit_code == 2 and _runs(runs_dir) == []


@pytest.mark.parametrize("extra", [(), ("--block", "1")])
def test_a_rejected_dataset_leaves_no_run_directory(cli, tmp_path, runs_dir, extra):
    bad = tmp_path / "bad.jsonl"
    good = json.dumps({"id": "q0", "retrieved": ["a"], "relevant": {"a": 1}})
    bad.write_text(good + '\n{"id": "q1", "retrieved": [}\n')
    res = cli("eval", bad, "-m", "recall", *extra)
    assert res.exit_code == 2 and "bad.jsonl" in res.output and "line 2" in res.output and _runs(runs_dir) == []


def test_run_files_are_written_atomically(cli, warranty, runs_dir, monkeypatch):
    """A crash while writing samples.jsonl leaves the previous complete file, never half of one."""
    assert cli("eval", warranty / "dataset.jsonl", "-m", LABEL).exit_code == 0
    (run,) = _runs(runs_dir)
    before = (run / "samples.jsonl").read_text()
    from ragmeter.io import writer

    def crash(tmp, path):
        raise KeyboardInterrupt  # as if killed between writing the temporary file and renaming it

    monkeypatch.setattr(writer, "_replace", crash)
    assert cli("eval", "--resume", run).exit_code != 0
    assert (run / "samples.jsonl").read_text() == before
    assert not [p for p in run.iterdir() if p.name.endswith(".tmp")]
    assert load_run(run).complete and len(load_run(run).results) == 6  # the previous complete files, whole


def test_a_corrupted_ledger_is_a_typed_error_naming_the_file(cli, warranty, runs_dir, seed_server, tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    ledger.write_bytes(b"SQLite format 3\x00" + b"\x13" * 4096)
    with pytest.raises(StorageError) as exc:
        Ledger(ledger).get("k")
    assert str(ledger) in str(exc.value) and "move it aside" in str(exc.value)
    res = cli("eval", warranty / "dataset.jsonl", *JUDGED_ARGS, "--judge-base-url", seed_server.url + "/v1",
              "--ledger", ledger)
    assert res.exit_code == 2 and str(ledger) in res.output and "Fix:" in res.output


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


def test_resume_from_another_folder_with_a_new_server_url(cli, warranty, tmp_path, monkeypatch, seed_server):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(warranty / "dataset.jsonl", work / "d.jsonl")
    shutil.copy(warranty / "corpus.jsonl", work / "c.jsonl")
    monkeypatch.chdir(work)
    first = cli("eval", "d.jsonl", "--corpus", "c.jsonl", "--only", "q1", *JUDGED_ARGS,
                "--judge-base-url", "http://127.0.0.1:9/v1", "--runs-dir", "runs", "--timeout", "0.5")
    assert "1 failed (1 unreachable, not stored)" in first.stdout  # the server was not there
    (run,) = _runs(work / "runs")
    options = load_run(run).setup["options"]
    assert options["dataset"] == str(work / "d.jsonl") and options["ledger"] == str(work / "runs" / "ledger.sqlite")
    assert load_run(run).setup["dataset"]["fingerprint"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    refused = cli("eval", "--resume", run, "--judge", "openai:other")
    assert refused.exit_code == 2 and "--judge" in refused.output
    done = cli("eval", "--resume", run, "--judge-base-url", seed_server.url + "/v1", "--timeout", "5")
    assert done.exit_code == 0, done.output
    finished = load_run(run)
    assert finished.complete and finished.setup["options"]["judge_base_url"] == seed_server.url + "/v1"
    assert finished.summary["faithfulness"]["failed"] == 0 and finished.summary["faithfulness"]["scored"] == 1
    assert (work / "runs" / "ledger.sqlite").exists() and not (elsewhere / "runs").exists()


def test_resume_refuses_a_dataset_that_changed(cli, warranty, tmp_path, runs_dir):
    data = tmp_path / "d.jsonl"
    shutil.copy(warranty / "dataset.jsonl", data)
    assert cli("eval", data, "-m", LABEL).exit_code == 0
    (run,) = _runs(runs_dir)
    rows = data.read_text().splitlines()
    data.write_text("\n".join(rows[:-1]) + "\n")
    res = cli("eval", "--resume", run)
    assert res.exit_code == 2 and "the dataset changed since the run started" in res.output and str(data) in res.output


def test_credentials_never_reach_run_files_or_messages(cli, warranty, runs_dir, seed_server, monkeypatch):
    # a URL with a password and OPENAI_API_KEY at once is refused (tests/judges/test_base_url_credentials.py):
    # the key this process holds is another service's
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ORDERS_API_KEY", "sk-held-KEY-123456")
    url = seed_server.url.replace("http://", "http://alice:hunter2secret@") + "/v1"
    seed_server.queue({}, {"status": 401})
    res = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
              *JUDGED_ARGS, "--judge-base-url", url)
    assert res.exit_code == 2 and "hunter2secret" not in res.output
    (run,) = _runs(runs_dir)
    for f in run.iterdir():
        text = f.read_text() if f.suffix in (".json", ".jsonl") else ""
        assert "hunter2secret" not in text and "sk-held-KEY-123456" not in text
    assert "http://***@127.0.0.1" in (run / "setup.json").read_text()
    with sqlite3.connect(runs_dir / "ledger.sqlite") as db:
        dump = " ".join(map(str, db.execute("SELECT * FROM judgments").fetchall()))
    assert "hunter2secret" not in dump and "sk-held-KEY-123456" not in dump
    again = cli("eval", "--resume", run)
    assert again.exit_code == 2 and "give --judge-base-url again" in again.output
    assert cli("eval", "--resume", run, "--judge-base-url", url).exit_code == 0


def test_retry_failed_from_the_cli_on_eval_and_resume(cli, warranty, runs_dir, seed_server):
    args = ("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
            "--metrics", "faithfulness", "--judge", "openai:m", "--concurrency", "1", "--max-reasks", "0",
            "--judge-base-url", seed_server.url + "/v1")
    seed_server.queue({"content": {"claims": "broken"}})  # the extraction never validates: stored as failed
    first = cli(*args)
    assert first.exit_code == 0 and "1 failed" in first.stdout
    calls = seed_server.count
    again = cli(*args)
    assert "1 failed" in again.stdout and seed_server.count == calls  # final until asked
    (run, _) = _runs(runs_dir)
    retried = cli("eval", "--resume", run, "--retry-failed")
    assert retried.exit_code == 0 and seed_server.count > calls
    assert load_run(run).summary["faithfulness"]["failed"] == 0


def test_the_judge_line_counts_requests_after_a_5xx(cli, warranty, seed_server):
    seed_server.queue({"status": 500})
    res = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
              "--metrics", "faithfulness", "--judge", "openai:m", "--concurrency", "1", "--no-save",
              "--judge-base-url", seed_server.url + "/v1")
    assert res.exit_code == 0 and "0 failed" in res.stdout
    calls = seed_server.count - 1
    assert f"judge openai:m: {calls} calls" in res.stdout
    assert f"{seed_server.count} HTTP requests (1 retried after a timeout, 5xx or 429)" in res.stdout
