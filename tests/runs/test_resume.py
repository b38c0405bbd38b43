"""``ragmeter.runs.resume``: a run killed with SIGKILL and restarted makes only the calls that had
not completed. kill -9 at random points of ``ragmeter eval`` and of ``--resume`` (at least 20 kills), with the
HTTP test judge: afterwards every run directory is complete and loadable, or resumable to the
same results as an uninterrupted run, and no judgment is paid twice: the server never receives
a request whose judgment the ledger already held when the request was sent."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ragmeter
from ragmeter.judges import Judge
from ragmeter.judges.backends import Backend, Reply
from ragmeter.runs import list_runs, load_run
from tests import judge_server, seed_judge
from tests.conftest import ROOT, WARRANTY
from tests.judge_fixtures import answer

MODELS = ("m0", "m1", "m2", "m3")
METRICS = "recall,faithfulness,context_recall"
EVAL_KILLS, RESUME_KILLS = 2, 3  # per model: 4 x 5 = 20 kills
MAX_LAUNCHES = 400  # a bound on the loop, not an expectation: the loop ends when the kills are made


class KeyRecorder(Backend):
    """Answers like the seed judge and records which ledger key each rendered request has."""

    name = "openai"

    def __init__(self, model: str) -> None:
        self.model = model
        self.keys: dict[str, str] = {}
        self.judge: Judge | None = None

    async def complete(self, messages, schema, schema_name, decoding, request=None) -> Reply:
        assert self.judge is not None
        self.keys[json.dumps(messages, sort_keys=True)] = self.judge.key(request)
        text = json.dumps(seed_judge.scripted(request.prompt.id, request.inputs, messages))
        return Reply(text, 1, 1, 0.0)


def make_dataset(path: Path) -> Path:
    """The warranty sample plus 15 copies of q1 with answers worded apart (each its own judgments)."""
    rows = [json.loads(line) for line in (WARRANTY / "dataset.jsonl").read_text().splitlines() if line.strip()]
    q1 = next(r for r in rows if r["id"] == "q1")
    rows += [{**q1, "id": f"q1-{i}", "answer": f"{q1['answer']} (variant {i})"} for i in range(15)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def ledger_keys(model: str, dataset: Path) -> dict[str, str]:
    """Rendered messages -> the ledger key ``openai:<model>`` stores that judgment under."""
    data = ragmeter.load_dataset(dataset, corpus=WARRANTY / "corpus.jsonl")
    rec = KeyRecorder(model)
    rec.judge = Judge(rec)
    ragmeter.evaluate(data, METRICS.split(","), judge=rec.judge)
    return rec.keys


def cells(run) -> dict:
    return {(r["id"], name): (c["status"], c.get("value")) for r in run.results for name, c in r["metrics"].items()}


def start(args: list, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ragmeter", *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def kill_at_random(proc: subprocess.Popen, server, rng: random.Random, lifetime: float) -> bool:
    """Kill -9 at a random moment of the process's expected ``lifetime`` (half of the time), or
    just after the next judge request reaches the server (mid-judging, calls in flight), plus
    jitter. True only when the process died of the SIGKILL (its exit status says so): one that
    ended first, however close the call, is no kill."""
    if rng.random() < 0.5:
        deadline = time.monotonic() + rng.uniform(0.05, 0.9) * lifetime
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
    else:
        target = server.count + 1
        while server.count < target and proc.poll() is None:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.1))
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return proc.returncode == -signal.SIGKILL


def timed(args: list, env: dict) -> float:
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ragmeter", *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return time.monotonic() - began


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX only")
def test_kill_9_loop_over_eval_and_resume(tmp_path, cli):
    srv, server = judge_server.start(seed_judge.over_http)
    server.delay = 0.05
    rng = random.Random(1729)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("RAGMETER_RUNS_DIR", None)
    runs = tmp_path / "runs"
    dataset = make_dataset(tmp_path / "dataset.jsonl")
    common = ["--corpus", str(WARRANTY / "corpus.jsonl"), "-m", METRICS, "--judge-base-url", server.url + "/v1",
              "--concurrency", "2", "--runs-dir", str(runs)]
    try:
        reference = cli("eval", dataset, *common[:-2], "--judge", "openai:ref", "--runs-dir", tmp_path / "ref")
        assert reference.exit_code == 0, reference.output
        (ref,) = list_runs(tmp_path / "ref")
        assert server.count >= 15  # judge requests of one whole run
        # how long a whole eval and a resume of a finished run take here (the kills land inside)
        lifetime = {"eval": timed(["eval", str(dataset), *common[:-2], "--judge", "openai:probe", "--runs-dir",
                                   str(tmp_path / "probe")], env)}
        lifetime["resume"] = timed(["eval", "--resume", str(list_runs(tmp_path / "probe")[0].path)], env)
        server.requests.clear()

        # launches go on until the kills have happened: how many launches that takes depends on the
        # machine's speed against the lifetimes measured above, so the bound is far from any count
        kills = {"eval": 0, "resume": 0}
        launches = 0
        for launches in range(1, MAX_LAUNCHES + 1):
            if kills["eval"] >= EVAL_KILLS * len(MODELS) and kills["resume"] >= RESUME_KILLS * len(MODELS):
                break
            model = MODELS[launches % len(MODELS)]
            mine = [r for r in list_runs(runs) if r.setup["options"]["judge"] == f"openai:{model}"]
            if len(mine) < EVAL_KILLS and kills["eval"] < EVAL_KILLS * len(MODELS) or not mine:
                proc = start(["eval", str(dataset), *common, "--judge", f"openai:{model}"], env)
                kills["eval"] += kill_at_random(proc, server, rng, lifetime["eval"])
            else:
                pick = rng.choice([r for r in mine if not r.complete] or mine)
                proc = start(["eval", "--resume", str(pick.path)], env)
                kills["resume"] += kill_at_random(proc, server, rng,
                                                  lifetime["resume" if pick.complete else "eval"])
        assert kills["eval"] >= 8 and kills["resume"] >= 12, (kills, launches)

        # afterwards: every run directory is a loadable run, complete or resumable to the same results
        dirs = [p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")]
        assert dirs and all((p / "setup.json").is_file() for p in dirs)
        for run in list_runs(runs, damaged=True):
            assert run.setup["status"] != "damaged", run.setup
            if not run.complete:
                done = subprocess.run([sys.executable, "-m", "ragmeter", "eval", "--resume", str(run.path)],
                                      env=env, capture_output=True, text=True, timeout=120, check=False)
                assert done.returncode == 0, done.stderr
            finished = load_run(run.path)
            assert finished.complete and cells(finished) == cells(ref), run.path

        # no judgment paid twice: no request reached the server after its judgment was stored
        stored: dict[str, float] = {}
        with sqlite3.connect(runs / "ledger.sqlite") as db:
            for key, status, created in db.execute("SELECT key, status, created_at FROM judgments"):
                assert status == "ok"
                stored[key] = created
        keys = {model: ledger_keys(model, dataset) for model in MODELS}
        asked: dict[str, int] = {}
        for req in server.requests:
            payload = req["payload"]
            key = keys[payload["model"]][json.dumps(payload["messages"], sort_keys=True)]
            asked[key] = asked.get(key, 0) + 1
            assert key in stored
            assert req["wall"] < stored[key], "a judgment already in the ledger was asked again (paid twice)"
        assert set(asked) == set(stored)
        print(f"kills: {kills} in {launches} launches, runs: {len(dirs)}, requests: {len(server.requests)}, "
              f"judgments: {len(stored)}, "
              f"asked again after a kill: {sum(n - 1 for n in asked.values())}")
    finally:
        srv.shutdown()


WORKER = Path(__file__).parent.parent / "judge_worker.py"


N = 60


def stored(path: Path) -> int:
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


@pytest.mark.slow
def test_kill_9_then_resume_loses_and_repeats_nothing(tmp_path):
    srv, server = judge_server.start(answer)
    server.delay = 0.05
    ledger = tmp_path / "ledger.sqlite"
    try:
        first = subprocess.Popen([sys.executable, str(WORKER), server.url, str(ledger), str(N)])
        deadline = time.monotonic() + 60
        while stored(ledger) < N // 3 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        time.sleep(0.3)  # let the server finish what the dead process had in flight
        done_before, calls_before = stored(ledger), server.count
        assert 0 < done_before < N, "the kill must land mid-run"
        lost_in_flight = calls_before - done_before
        assert 0 <= lost_in_flight <= 4  # at most the concurrency limit

        second = subprocess.run([sys.executable, str(WORKER), server.url, str(ledger), str(N)],
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 0, second.stderr
        assert second.stdout.strip() == str(N)
        with sqlite3.connect(ledger) as db:
            keys = [k for (k,) in db.execute("SELECT key FROM judgments")]
            ok = db.execute("SELECT COUNT(*) FROM judgments WHERE status = 'ok'").fetchone()[0]
        assert len(keys) == len(set(keys)) == N and ok == N
        assert server.count == N + lost_in_flight
        rerun = subprocess.run([sys.executable, str(WORKER), server.url, str(ledger), str(N)],
                               capture_output=True, text=True, timeout=120)
        assert rerun.stdout.strip() == str(N) and server.count == N + lost_in_flight  # zero calls
    finally:
        srv.shutdown()


@pytest.mark.slow
def test_concurrent_writers_do_not_corrupt_the_ledger(tmp_path):
    """Two processes judging the same items into one ledger: every judgment once, none broken."""
    srv, server = judge_server.start(answer)
    ledger = tmp_path / "ledger.sqlite"
    try:
        procs = [subprocess.Popen([sys.executable, str(WORKER), server.url, str(ledger), "30"],
                                  stdout=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=120)[0].strip() for p in procs]
        assert outs == ["30", "30"]
        with sqlite3.connect(ledger) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert db.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM judgments").fetchone() == (30, 30)
    finally:
        srv.shutdown()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
def test_label_metrics_open_no_socket(monkeypatch, warranty):
    """No telemetry, no downloads: a label-only evaluation never opens a network connection."""
    import socket

    import ragmeter

    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    assert ragmeter.evaluate(data).means()["ndcg@5"] is not None


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.slow
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


@pytest.mark.slow
def test_resume_marks_the_run_as_this_process_and_completes_it(cli, warranty, runs_dir):
    assert cli("eval", warranty / "dataset.jsonl").exit_code == 0
    (run,) = list_runs(runs_dir)
    setup = json.loads((run.path / "setup.json").read_text())
    setup.update(status="running", pid=_dead_pid())
    (run.path / "setup.json").write_text(json.dumps(setup))
    assert cli("eval", "--resume", run.path).exit_code == 0
    assert load_run(run.path).status == "complete"


LABEL = "recall,ndcg"


JUDGED_ARGS = ("--metrics", "recall,faithfulness", "--judge", "openai:m", "--concurrency", "1")


def _runs(runs_dir):
    return sorted(p for p in runs_dir.iterdir() if p.is_dir()) if runs_dir.exists() else []


@pytest.mark.slow
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


@pytest.fixture
def server(seed_server):
    return seed_server


def test_interrupted_run_is_marked_and_resumes_without_repeating_calls(cli, warranty, server, runs_dir):
    args = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
            "--metrics", "faithfulness,context_recall", "--judge", "openai:m", "--judge-base-url",
            server.url + "/v1", "--concurrency", "1"]
    server.queue({}, {}, {"status": 401})  # extraction and one verification, then the key is refused
    failed = cli(*args)
    assert failed.exit_code == 2
    (run,) = list_runs(runs_dir)
    assert not run.complete and "--resume" in cli("show", run.path).stdout
    calls_before = server.count
    resumed = cli("eval", "--resume", run.path)
    assert resumed.exit_code == 0, resumed.output
    assert load_run(run.path).complete
    assert server.count == calls_before + 1  # only the verification that never completed


# --- issue 38: a lock on a run, and the budget across --resume --------------------------------------------


def test_a_second_resume_while_one_runs_is_refused_and_pays_nothing(cli, warranty, server, runs_dir):
    from ragmeter.runs.lock import acquire

    args = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
            "--metrics", "faithfulness", "--judge", "openai:m", "--judge-base-url", server.url + "/v1"]
    server.queue({"status": 401})
    assert cli(*args).exit_code == 2
    (run,) = list_runs(runs_dir)
    first = acquire(run.path)  # the first resume, still running
    calls = server.count
    second = cli("eval", "--resume", run.path)
    assert second.exit_code == 2 and "is being written by pid" in second.output and server.count == calls
    assert "Traceback" not in second.output
    first.close()
    assert cli("eval", "--resume", run.path).exit_code == 0 and load_run(run.path).complete


def test_a_run_finished_by_another_resume_meanwhile_is_not_resumed_again(cli, warranty, server, runs_dir):
    from ragmeter.runs.resume import locked_again

    args = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
            "--metrics", "faithfulness", "--judge", "openai:m", "--judge-base-url", server.url + "/v1"]
    server.queue({"status": 401})
    cli(*args)
    (run,) = list_runs(runs_dir)  # read while interrupted
    assert cli("eval", "--resume", run.path).exit_code == 0  # another process finishes it
    with pytest.raises(ragmeter.InvalidParameterError, match="completed by another process"):
        locked_again(run)


def test_the_budget_is_stored_and_holds_across_resume(cli, warranty, server, runs_dir):
    """The trial: --budget 100 stops the run, and its message says to finish with --resume, which
    then spent 410 tokens (the budget was not stored). Now the budget and the spending are in
    setup.json, a resume without --budget stops at the same cap, and a larger one finishes."""
    args = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--metrics", "faithfulness",
            "--judge", "openai:m", "--judge-base-url", server.url + "/v1", "--concurrency", "1",
            "--max-reasks", "0"]
    stopped = cli(*args, "--budget", "3000")
    assert stopped.exit_code == 2 and "budget of 3000 tokens" in stopped.output, stopped.output
    assert "--budget N (or --budget-usd) with a larger cap" in stopped.output
    (run,) = list_runs(runs_dir)
    setup = load_run(run.path).setup
    assert setup["options"]["budget_tokens"] == 3000 and setup["options"]["budget_usd"] is None
    spent = setup["spent"]["input_tokens"] + setup["spent"]["output_tokens"]
    assert 0 < spent <= 3000
    calls = server.count
    again = cli("eval", "--resume", run.path)  # no --budget: the stored one holds
    assert again.exit_code == 2 and "budget of 3000 tokens" in again.output
    after = load_run(run.path).setup["spent"]
    assert after["input_tokens"] + after["output_tokens"] <= 3000  # never past the cap, over both invocations
    assert server.count - calls <= 1  # at most the call that fitted what was left
    done = cli("eval", "--resume", run.path, "--budget", "1000000")
    assert done.exit_code == 0, done.output
    finished = load_run(run.path)
    assert finished.complete and finished.setup["options"]["budget_tokens"] == 1000000


def test_a_setup_without_options_is_said_not_blamed_on_the_dataset(cli, warranty, runs_dir):
    """The trial: --resume on a setup.json with no options said DATASET was missing."""
    assert cli("eval", warranty / "dataset.jsonl", "-m", LABEL).exit_code == 0
    (run,) = _runs(runs_dir)
    setup = json.loads((run / "setup.json").read_text())
    del setup["options"]
    setup["status"] = "interrupted"
    (run / "setup.json").write_text(json.dumps(setup))
    r = cli("eval", "--resume", run)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "the run's setup holds no options to resume it with" in r.output and "DATASET" not in r.output
