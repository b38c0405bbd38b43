"""The settings object owns every default once, and the library functions the CLI calls
(resume, the judge and embedder factories, the run driver, dry run, cost, CSV, the watch
loop) do what the CLI did, now callable from Python."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ragmeter
from ragmeter.core.settings import DEFAULTS, InvalidSettingError, Settings, WatchSettings
from ragmeter.engine.call_plan import dry_run_plan, needs_judge
from ragmeter.engine.evaluate import resolve_measures
from ragmeter.evidence.sources import Sources
from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.judges.cost import usd
from ragmeter.judges.judge_factory import describe_judge, judge_from_description, make_judge
from ragmeter.live.loop import parse_alert, run_watch
from ragmeter.report.results_csv import results_csv, write_results_csv
from ragmeter.report.table import judge_line
from ragmeter.runs import inputs, load_run
from ragmeter.runs.driver import run_evaluation
from ragmeter.runs.resume import resume_settings
from tests import judge_server, live_judge, seed_judge
from tests.installed import need

ROOT = Path(__file__).resolve().parents[2]

# --- one owner for every default -------------------------------------------------------------

# Run in a fresh interpreter: replace DEFAULTS before anything else is imported, then read every
# default the CLI, the judge stack, the Ray engine and the watch loop declare. A literal left in a
# signature keeps the old value and fails here.
PROBE = r"""
import json, inspect
import ragmeter.core.settings as s
s.DEFAULTS = s.Settings(k=4, concurrency=3, timeout=7.5, max_reasks=1, embedder="minilm", engine="local", name="nm",
                        watch=s.WatchSettings(sample_rate=0.5, window=9, host="127.0.0.2", port=9999, interval=0.25,
                                              max_drop=0.2, state="st"))
import typer
from ragmeter.cli.main import app
from ragmeter.engine.distributed import evaluate_ray
from ragmeter.engine.evaluate import evaluate
from ragmeter.engine.retriever import evaluate_retriever
from ragmeter.judges import Judge, make_backend
from ragmeter.judges.backends import OpenAIBackend
from ragmeter.judges.transport import RetryPolicy
from ragmeter.live.alerts import Alert
from ragmeter.live.prometheus import serve
from ragmeter.live.watch import Watcher
from ragmeter.testing import assert_metrics

def default(fn, name):
    return inspect.signature(fn).parameters[name].default

commands = typer.main.get_command(app).commands
cli = {c: {p.name: p.default for p in commands[c].params} for c in ("eval", "watch")}
testset = {p.name: p.default for p in commands["testset"].commands["generate"].params}
print(json.dumps({
    "cli_eval": {n: cli["eval"][n]
                 for n in ("k", "concurrency", "timeout", "max_reasks", "embedder", "engine", "name")},
    "cli_watch": {n: cli["watch"][n]
                  for n in ("sample_rate", "window", "host", "port", "interval", "max_drop", "state")},
    "cli_testset": {n: testset[n] for n in ("concurrency", "timeout", "max_reasks", "embedder")},
    "make_backend": default(make_backend, "concurrency"),
    "http_backend": default(OpenAIBackend.__mro__[1].__init__, "concurrency"),
    "retry_timeout": RetryPolicy().timeout,
    "judge_reasks": default(Judge.__init__, "max_reasks"),
    "ray": [default(evaluate_ray, "k"), default(evaluate_ray, "concurrency")],
    "retriever_k": default(evaluate_retriever, "k"),
    "evaluate_k": default(evaluate, "k"),
    "assert_metrics_k": default(assert_metrics, "k"),
    "watcher": [Watcher.__dataclass_fields__["sample_rate"].default, Watcher.__dataclass_fields__["window"].default,
                Alert.__dataclass_fields__["max_drop"].default, default(serve, "host"), default(serve, "port")],
}))
"""


@pytest.mark.slow
def test_every_default_comes_from_the_settings_object():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    got = json.loads(out.stdout)
    assert got["cli_eval"] == {"k": 4, "concurrency": 3, "timeout": 7.5, "max_reasks": 1, "embedder": "minilm",
                               "engine": "local", "name": "nm"}
    assert got["cli_watch"] == {"sample_rate": 0.5, "window": 9, "host": "127.0.0.2", "port": 9999, "interval": 0.25,
                                "max_drop": 0.2, "state": "st"}
    assert got["cli_testset"] == {"concurrency": 3, "timeout": 2 * 7.5, "max_reasks": 1, "embedder": "minilm"}
    assert got["make_backend"] == got["http_backend"] == 3
    assert got["retry_timeout"] == 7.5 and got["judge_reasks"] == 1
    assert got["ray"] == [4, 3] and got["retriever_k"] == got["evaluate_k"] == 4 and got["assert_metrics_k"] == 4
    assert got["watcher"] == [0.5, 9, 0.2, "127.0.0.2", 9999]


def test_the_stated_defaults():
    s = Settings()
    assert (s.k, s.concurrency, s.timeout, s.max_reasks, s.embedder, s.engine, s.judge) == \
        (5, 8, 60.0, 2, "minilm", "local", "auto")
    assert (s.watch.metrics, s.watch.window, s.watch.port) == (("faithfulness", "answer_relevancy"), 100, 9464)


def test_runs_dir_and_ledger_follow_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGMETER_RUNS_DIR", str(tmp_path / "elsewhere"))
    assert Settings().ledger_path == str(tmp_path / "elsewhere" / "ledger.sqlite")
    assert Settings(ledger="l.sqlite").ledger_path == "l.sqlite"


@pytest.mark.parametrize("bad", [{"k": 0}, {"k": -1}, {"k": True}, {"concurrency": 0}, {"timeout": 0},
                                 {"max_reasks": -1}, {"block": 0}, {"engine": "spark"}, {"budget_usd": 1.0},
                                 {"watch": None}])
def test_invalid_settings_name_the_setting(bad):
    if "watch" in bad:
        with pytest.raises(InvalidSettingError) as exc:
            WatchSettings(sample_rate=1.5)
        assert exc.value.setting == "sample_rate"
        return
    with pytest.raises(InvalidSettingError) as exc:
        Settings(**bad)
    assert exc.value.setting == next(iter(bad))


def test_the_stored_form_round_trips_and_reads_old_runs():
    s = Settings(dataset="d.jsonl", k=None, metrics=("ndcg@5", "faithfulness"), only=("q1", "q2"), judge="none",
                 runs_dir="r")
    stored = s.stored()
    assert stored["k"] is None and stored["judge"] is None and stored["only"] == "q1,q2"
    assert stored["ledger"] == str(Path("r") / "ledger.sqlite") and stored["metrics"] == ["ndcg@5", "faithfulness"]
    again = Settings.from_stored(json.loads(json.dumps(stored)))
    assert again.stored() == stored and again.judge == "none"
    assert Settings.from_stored({"k": 0}).k is None  # runs written before k=None was stored as such


# --- resume ---------------------------------------------------------------------------------------

@pytest.fixture
def stored_run(tmp_path):
    from ragmeter.runs import start_run

    path = tmp_path / "run"
    start_run(path, Settings(dataset="data.jsonl", metrics=("faithfulness",), judge="openai:m", runs_dir=str(tmp_path),
                             price_in=1.0, price_out=2.0).stored())
    return load_run(path)


def test_resume_takes_the_stored_settings_and_this_invocations_caps(stored_run):
    s = resume_settings(stored_run, {"k": 5, "budget_tokens": 900, "engine": "local", "judge": "auto"},
                        given={"budget_tokens"})
    assert (s.dataset, s.metrics, s.judge, s.price_in, s.budget_tokens) == ("data.jsonl", ("faithfulness",),
                                                                            "openai:m", 1.0, 900)


def test_resume_accepts_a_stored_setting_given_again_with_its_value(stored_run, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    s = resume_settings(stored_run, {"dataset": str(tmp_path / "data.jsonl"), "k": 5, "metrics": ("faithfulness",)},
                        given={"dataset", "k", "metrics"})
    assert s.dataset == "data.jsonl"


@pytest.mark.parametrize("name,value", [("k", 10), ("metrics", ("recall",)), ("judge", "openai:other"),
                                        ("dataset", "other.jsonl"), ("max_reasks", 5), ("save", False),
                                        ("name", "again")])
def test_resume_refuses_what_would_change_the_run(stored_run, name, value):
    with pytest.raises(InvalidSettingError) as exc:
        resume_settings(stored_run, {name: value}, given={name})
    assert exc.value.setting == name and str(stored_run.path) in exc.value.message


def test_resume_from_the_cli_refuses_a_conflicting_option_and_honours_a_budget(cli, warranty, runs_dir):
    first = cli("eval", warranty / "dataset.jsonl", "-m", "recall", "--name", "first")
    assert first.exit_code == 0
    (run,) = runs_dir.iterdir()
    refused = cli("eval", "--resume", run, "--k", "10")
    assert refused.exit_code == 2 and "was started with k=5" in refused.output and "--k" in refused.output
    again = cli("eval", "--resume", run, "--k", "5", "--budget", "1000")
    assert again.exit_code == 0 and "run saved:" in again.stdout
    assert list(runs_dir.iterdir()) == [run]  # finished in place, no new run


# --- the judge and embedder factories -------------------------------------------------------------

def test_make_judge_reads_the_settings(tmp_path):
    s = Settings(judge="openai:m", judge_base_url="http://127.0.0.1:9/v1", concurrency=3, timeout=7.5, max_reasks=1,
                 budget_usd=0.5, price_in=1.0, price_out=2.0, ledger=str(tmp_path / "l.sqlite"))
    judge = make_judge(s.judge_spec, s)
    assert judge is not None and judge.max_reasks == 1 and judge.ledger.path == str(tmp_path / "l.sqlite")
    assert judge.backend.limiter.max_limit == 3 and judge.backend.policy.timeout == 7.5
    assert (judge.budget.max_usd, judge.budget.price_in, judge.budget.price_out) == (0.5, 1.0, 2.0)
    assert make_judge("none", s) is None and make_judge(None, s) is None


def test_auto_is_the_local_judge_only_when_installed_and_needed(monkeypatch):
    import ragmeter.judges.local.model as lm
    import ragmeter.judges.offline.backend as offline

    def resolve_judge(settings, notify=None):  # measures are resolved once per run, then passed down
        return inputs.resolve_judge(settings, inputs.run_measures(settings), notify)

    told = []
    monkeypatch.setattr(lm, "local_available", lambda: True)
    assert resolve_judge(Settings(metrics=("faithfulness",)), told.append).judge == "local" and len(told) == 1
    assert resolve_judge(Settings(metrics=("ndcg@5",)), told.append).judge == "none" and len(told) == 1
    assert resolve_judge(Settings(metrics=("faithfulness",), judge="none")).judge == "none"
    monkeypatch.setattr(lm, "local_available", lambda: False)
    assert resolve_judge(Settings(metrics=("faithfulness",))).judge == "local"  # [embeddings] alone: the offline judge
    monkeypatch.setattr(offline, "embeddings_available", lambda: False)
    assert resolve_judge(Settings(metrics=("faithfulness",))).judge == "none"
    assert make_judge("auto") is None


def test_a_judge_description_crosses_processes_with_its_settings(tmp_path):
    from ragmeter.ledger import Ledger

    s = Settings(judge="openai:m", judge_base_url="http://127.0.0.1:9/v1", concurrency=2, timeout=3.0, max_reasks=0)
    description = describe_judge(s)
    assert json.loads(json.dumps(description)) == description  # plain data, no client, no key
    judge = judge_from_description(description, Ledger(":memory:"))
    assert (judge.backend.limiter.max_limit, judge.backend.policy.timeout, judge.max_reasks) == (2, 3.0, 0)
    partial = judge_from_description({"judge": "openai:m", "base_url": "http://127.0.0.1:9/v1"}, Ledger(":memory:"))
    assert partial.backend.limiter.max_limit == DEFAULTS.concurrency and partial.max_reasks == DEFAULTS.max_reasks
    scripted = judge_from_description({"scripted": "tests.live_judge:scripted"}, Ledger(":memory:"))
    assert isinstance(scripted.backend, ScriptedBackend)
    assert describe_judge(Settings(judge="none")) is None


def test_embedder_factory(monkeypatch):
    from ragmeter.embeddings import embedder_for

    assert embedder_for(Settings()) is None  # the bundled model: the engine loads it only when needed
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert embedder_for(Settings(embedder="openai:e")).identity == {"backend": "openai", "model": "e"}
    with pytest.raises(ragmeter.InvalidParameterError, match="unknown embedder"):
        embedder_for(Settings(embedder="word2vec"))


# --- cost, CSV, the judge line, the dry run ----------------------------------------------------------

def test_cost_is_per_million_tokens():
    assert usd(3380, 626, 1.0, 2.0) == (3380 * 1.0 + 626 * 2.0) / 1_000_000
    assert usd(1000, 1000, None, 2.0) == 1000 * 2.0 / 1_000_000


def _judged_q1(warranty, server, tmp_path):
    s = Settings(dataset=str(warranty / "dataset.jsonl"), corpus=str(warranty / "corpus.jsonl"), only=("q1",),
                 metrics=("faithfulness", "recall@5"), judge="openai:m", judge_base_url=server.url + "/v1",
                 ledger=str(tmp_path / "l.sqlite"), save=False, price_in=1.0, price_out=2.0)
    return s, run_evaluation(s)


def test_judge_line_prices_the_tokens(warranty, seed_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    s, done = _judged_q1(warranty, seed_server, tmp_path)
    st = done.result.judge_stats
    line = judge_line("openai:m", done.result, 1.0, 2.0)
    assert line.startswith(f"judge openai:m: {st['calls']} calls (")
    assert line.endswith(f", about ${(st['input_tokens'] * 1.0 + st['output_tokens'] * 2.0) / 1e6:.4f}")
    assert "about $" not in judge_line("openai:m", done.result, 1.0, None)


def test_results_csv_has_one_row_per_sample_and_metric(warranty, tmp_path):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl")
    result = ragmeter.evaluate(data, ["recall@5", "faithfulness"])
    rows = list(csv.reader(io.StringIO(results_csv(result))))
    assert rows[0] == ["sample_id", "metric", "status", "value", "reason"] and len(rows) == 1 + 6 * 2
    assert rows[1] == ["q1", "recall@5", "scored", repr(2 / 3), ""]
    assert rows[2][:4] == ["q1", "faithfulness", "not_computed", ""] and "needs a judge" in rows[2][4]
    write_results_csv(result, str(tmp_path / "r.csv"))
    assert (tmp_path / "r.csv").read_bytes().decode() == results_csv(result)


def test_dry_run_plans_and_refuses_without_a_judge(warranty, seed_server, tmp_path):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    assert dry_run_plan(data, resolve_measures(["ndcg@5"], 5), sources=Sources()) == {
        "calls": 0, "note": "no judged metric requested"}
    with pytest.raises(InvalidSettingError) as exc:
        dry_run_plan(data, resolve_measures(["faithfulness"], 5), sources=Sources())
    assert exc.value.setting == "dry_run"
    judge = Judge(ScriptedBackend(live_judge.scripted))
    plan = dry_run_plan(data, resolve_measures(["faithfulness"], 5), sources=Sources(judge=judge))
    assert plan["calls"] == 2  # q1: extract + verify
    assert judge.stats.calls == 0
    assert needs_judge(resolve_measures(["faithfulness"], 5))
    assert not needs_judge(resolve_measures(["ndcg@5", "semantic_similarity"], 5))


# --- the run driver ------------------------------------------------------------------------------------

def test_run_evaluation_equals_evaluate_and_records_the_run(warranty, tmp_path):
    s = Settings(dataset=str(warranty / "dataset.jsonl"), corpus=str(warranty / "corpus.jsonl"), runs_dir=str(tmp_path))
    done = run_evaluation(s)
    direct = ragmeter.evaluate(ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl"))
    assert done.result.to_dict() == direct.to_dict() and done.plan is None and done.streamed is None
    run = load_run(done.run_path)
    assert run.complete and run.setup["options"] == done.settings.stored() and done.settings.judge == "none"


def test_run_evaluation_streams_and_plans_without_a_run_directory(warranty, tmp_path):
    base = Settings(dataset=str(warranty / "dataset.jsonl"), runs_dir=str(tmp_path), metrics=("recall@5", "mrr@5"))
    streamed = run_evaluation(base.replace(block=4))
    assert streamed.streamed.dataset["samples"] == 6 and streamed.streamed.summary["recall@5"]["scored"] == 6
    assert [str(m) for m in streamed.streamed.measures] == ["recall@5", "reciprocal_rank@5"]
    before = set(tmp_path.iterdir())
    plan = run_evaluation(base.replace(dry_run=True))
    assert plan.plan == {"calls": 0, "note": "no judged metric requested"} and plan.run_path is None
    assert set(tmp_path.iterdir()) == before


@pytest.mark.parametrize("change,setting", [({"block": 2, "only": ("q1",)}, "block"), ({"block": 2, "dry_run": True},
                                            "block"), ({"engine": "ray", "budget_tokens": 100}, "engine"),
                                            ({"only": ("nope",)}, "only"), ({"dataset": None}, "dataset")])
def test_run_evaluation_refuses_before_it_writes_anything(warranty, tmp_path, change, setting):
    s = Settings(dataset=str(warranty / "dataset.jsonl"), runs_dir=str(tmp_path / "runs")).replace(**change)
    with pytest.raises(InvalidSettingError) as exc:
        run_evaluation(s)
    assert exc.value.setting == setting and not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_run_evaluation_on_ray_equals_the_local_engine(warranty, tmp_path, monkeypatch):
    ray = need("ray")
    srv, state = judge_server.start(seed_judge.over_http)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 2 ** 20, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
                                       "OPENAI_API_KEY": "k"}})
    try:
        s = Settings(dataset=str(warranty / "dataset.jsonl"), corpus=str(warranty / "corpus.jsonl"),
                     metrics=("faithfulness", "ndcg@5"), judge="openai:m", judge_base_url=state.url + "/v1",
                     runs_dir=str(tmp_path))
        remote = run_evaluation(s.replace(engine="ray"))
        local = run_evaluation(s.replace(ledger=str(tmp_path / "other.sqlite"), save=False))
        a, b = remote.result.to_dict(), local.result.to_dict()
        assert a["metrics"] == b["metrics"] and a["samples"] == b["samples"]
        assert load_run(remote.run_path).complete
    finally:
        ray.shutdown()
        srv.shutdown()


# --- the watch loop ------------------------------------------------------------------------------------

def test_parse_alert():
    assert (parse_alert(" faithfulness < 0.8").metric, parse_alert("faithfulness<0.8").below) == ("faithfulness", 0.8)
    for bad in ("faithfulness", "faithfulness<high", "<0.5"):
        with pytest.raises(InvalidSettingError):
            parse_alert(bad)


def test_run_watch_drains_the_log_and_stops_on_an_alert(tmp_path, monkeypatch):
    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i, answer="bad") for i in range(3)))
    srv, state = judge_server.start(live_judge.over_http)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    try:
        said: list[str] = []
        watch = WatchSettings(log=str(log), state=str(tmp_path / "s"), port=0, once=True)
        s = Settings(judge="openai:m", judge_base_url=state.url + "/v1", watch=watch)
        assert run_watch(s, said.append) == 0
        assert said == ["scored 3 new; last 100: faithfulness 0.000, answer_relevancy 1.000"]
        assert (tmp_path / "s" / "ledger.sqlite").exists()  # the ledger defaults to the state directory
        with open(log, "a") as f:
            f.write(live_judge.request_line(9, answer="bad"))
        alerting = s.replace(watch=WatchSettings(log=str(log), state=str(tmp_path / "s"), port=0, once=True,
                                                 alerts=("faithfulness<0.5",), exit_on_alert=True))
        said.clear()
        assert run_watch(alerting, said.append) == 3
        assert said[-1] == "ALERT: faithfulness rolling mean 0.000 is below 0.5"
    finally:
        srv.shutdown()


def test_run_watch_says_what_it_could_not_score(tmp_path):
    """With no judge nothing in the window has a value: the line says so per metric, where it
    used to end in an empty list ("scored 2 new; last 100: ")."""
    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i, answer="bad") for i in range(2)))
    said: list[str] = []
    watch = WatchSettings(log=str(log), state=str(tmp_path / "s"), port=0, once=True)
    assert run_watch(Settings(judge="none", watch=watch), said.append) == 0
    [line] = said  # and why, as eval says it
    # the head said "scored 2 new" though nothing was computed, before (issue 31)
    assert line.startswith("read 2 new, nothing computed; last 100: faithfulness not computed on 2 (needs a judge: ")
    assert line.endswith(", answer_relevancy not computed on 2 (the same reason)")
