"""kill -9 at random points of ``ragmeter eval`` and of ``--resume`` (at least 20 kills), with the
HTTP test judge: afterwards every run directory is complete and loadable, or resumable to the
same results as an uninterrupted run, and no judgment is paid twice: the server never receives
a request whose judgment the ledger already held when the request was sent."""

from __future__ import annotations

import json
import os
import random
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

MODELS = ("m0", "m1", "m2", "m3")
METRICS = "recall,faithfulness,context_recall"
EVAL_KILLS, RESUME_KILLS = 2, 3  # per model: 4 x 5 = 20 kills


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
    jitter. False when the process ended first."""
    if rng.random() < 0.5:
        deadline = time.monotonic() + rng.uniform(0.05, 0.9) * lifetime
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
    else:
        target = server.count + 1
        while server.count < target and proc.poll() is None:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.1))
    killed = proc.poll() is None
    if killed:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return killed


def timed(args: list, env: dict) -> float:
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ragmeter", *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return time.monotonic() - began


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

        kills = {"eval": 0, "resume": 0}
        for launch in range(60):
            if kills["eval"] >= EVAL_KILLS * len(MODELS) and kills["resume"] >= RESUME_KILLS * len(MODELS):
                break
            model = MODELS[launch % len(MODELS)]
            mine = [r for r in list_runs(runs) if r.setup["options"]["judge"] == f"openai:{model}"]
            if len(mine) < EVAL_KILLS and kills["eval"] < EVAL_KILLS * len(MODELS) or not mine:
                proc = start(["eval", str(dataset), *common, "--judge", f"openai:{model}"], env)
                kills["eval"] += kill_at_random(proc, server, rng, lifetime["eval"])
            else:
                pick = rng.choice([r for r in mine if not r.complete] or mine)
                proc = start(["eval", "--resume", str(pick.path)], env)
                kills["resume"] += kill_at_random(proc, server, rng,
                                                  lifetime["resume" if pick.complete else "eval"])
        assert kills["eval"] >= 8 and kills["resume"] >= 12, kills

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
        print(f"kills: {kills}, runs: {len(dirs)}, requests: {len(server.requests)}, judgments: {len(stored)}, "
              f"asked again after a kill: {sum(n - 1 for n in asked.values())}")
    finally:
        srv.shutdown()
