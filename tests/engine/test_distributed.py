"""Ray's usage stats are off for the cluster evaluate_ray starts (on by default for ray.init)."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest

import ragmeter
from ragmeter.core.sample import Chunk, Sample
from ragmeter.engine.distributed import evaluate_ray
from ragmeter.evidence.sources import SourcesDescription
from ragmeter.io import from_samples
from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.ledger import Ledger
from tests import judge_server, live_judge
from tests.installed import need


def test_ray_usage_stats_are_off(monkeypatch):
    need("ray")
    from ray._common.usage import usage_lib

    from ragmeter.engine.distributed import _ray

    monkeypatch.delenv("RAY_USAGE_STATS_ENABLED", raising=False)
    assert usage_lib._usage_stats_enabledness() is not usage_lib.UsageStatsEnabledness.DISABLED_EXPLICITLY
    _ray()
    assert usage_lib._usage_stats_enabledness() is usage_lib.UsageStatsEnabledness.DISABLED_EXPLICITLY


ray = need("ray")


ROOT = str(Path(__file__).resolve().parents[2])


JUDGED = ["faithfulness", "answer_relevancy", "faithfulness(unsupported='pass')"]


@pytest.fixture(scope="module")
def cluster():
    # the workers import the same ragmeter as this process (the driver's PYTHONPATH is kept)
    path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    ray.init(num_cpus=4, include_dashboard=False, object_store_memory=100 * 2 ** 20, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path, "OPENAI_API_KEY": "k"}})
    yield
    ray.shutdown()


def dataset(n, seed=0):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        chunks = tuple(Chunk(f"c{c}", text=f"text {c}") for c in rnd.sample(range(40), 6))
        labels = {f"c{c}": rnd.choice([0, 1, 2]) for c in rnd.sample(range(40), rnd.randint(0, 3))}
        out.append(Sample(id=f"q{i}", question=f"question {i}?", retrieved=chunks, relevance=labels,
                          answer="ok" if i % 3 else "wrong"))
    return from_samples(out)


def test_without_ray_the_engine_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ragmeter.RagmeterError, match=r"pip install 'ragmeter\[ray\]'"):
        evaluate_ray(dataset(2), ["ndcg@5"])


@pytest.mark.slow
def test_identical_to_the_local_engine_on_the_bundled_sample(cluster, warranty):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    metrics = ["precision", "recall", "ndcg(discount='jk2002')", "reciprocal_rank", "average_precision"]
    local = ragmeter.evaluate(data, metrics)
    remote = evaluate_ray(data, metrics, shards=3)
    assert remote.to_dict() == local.to_dict()


@pytest.mark.slow
def test_embedder_and_criteria_reach_the_workers(cluster, warranty, tmp_path):
    """An embedder spec is built in each worker (its base URL sent, its key not: workers have
    their own) and custom rubric criteria travel with the shard: same scores as locally."""
    from ragmeter.embeddings import make_embedder
    from ragmeter.metrics.generation.rubric import load_rubric_criteria

    srv, state = judge_server.start(lambda text, payload: {"score": 9 if "CRITERION: tone" in text else 2,
                                                          "reason": "scripted"})
    try:
        crit_file = tmp_path / "criteria.json"
        crit_file.write_text(json.dumps({"criteria": [{"name": "tone", "description": "Polite?", "scale": [0, 10]}]}))
        criteria = load_rubric_criteria(crit_file)
        data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
        metrics = ["semantic_similarity", "rubric(criterion='tone')"]
        url = state.url + "/v1"
        local = ragmeter.evaluate(data, metrics, embedder=make_embedder("openai:letters", base_url=url, api_key="k"),
                                  criteria=criteria, judge=Judge(ScriptedBackend(
                                      lambda prompt_id, inputs, messages: {"score": 9, "reason": "scripted"})))
        remote = evaluate_ray(data, metrics, shards=2, sources=SourcesDescription(
                                  embedder="openai:letters", embedder_base_url=url, criteria=criteria,
                                  judge={"judge": "openai:m", "base_url": url}),
                              ledger=str(tmp_path / "ledger.sqlite"))
    finally:
        srv.shutdown()
    for m in metrics:
        assert [o.value for o in remote.outcomes[m]] == [o.value for o in local.outcomes[m]], m
    assert remote.to_dict()["metrics"]["semantic_similarity"]["provenance"]["embedder"]["backend"] == "openai"


@pytest.mark.slow
def test_identical_on_5000_samples_with_a_scripted_judge(cluster, tmp_path):
    data = dataset(5000)
    metrics = ["ndcg@5", "recall@5", *JUDGED]
    local = ragmeter.evaluate(data, metrics, judge=Judge(ScriptedBackend(live_judge.scripted)))
    remote = evaluate_ray(data, metrics, shards=4, sources=SourcesDescription(
                              judge={"scripted": "tests.live_judge:scripted"}), ledger=str(tmp_path / "ledger.sqlite"))
    a, b = local.to_dict(), remote.to_dict()
    assert a["metrics"] == b["metrics"] and a["samples"] == b["samples"]
    # the shards' judgments are merged into the run's ledger, each once
    assert len(Ledger(tmp_path / "ledger.sqlite")) == local.judge_stats["calls"]


@pytest.mark.slow
def test_the_limiter_caps_requests_cluster_wide(cluster, tmp_path):
    srv, state = judge_server.start(live_judge.over_http)
    state.delay = 0.05
    try:
        data = dataset(40, seed=1)
        spec = {"judge": "openai:m", "base_url": state.url + "/v1", "concurrency": 3}
        result = evaluate_ray(data, ["faithfulness"], shards=4, sources=SourcesDescription(judge=spec),
                              ledger=str(tmp_path / "l.sqlite"),
                              concurrency=3)
        assert result.summary("faithfulness").scored == 40
        assert state.max_in_flight <= 3 and state.count >= 40
    finally:
        srv.shutdown()


def _stored(path):
    if not os.path.exists(path):
        return 0
    try:
        with sqlite3.connect(path) as db:
            return db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_a_killed_worker_loses_and_repeats_nothing(cluster, tmp_path):
    srv, state = judge_server.start(live_judge.over_http)
    state.delay = 0.1
    beats = tmp_path / "beats"
    beats.mkdir()
    ledger = tmp_path / "run" / "ledger.sqlite"
    ledger.parent.mkdir()
    data = dataset(24, seed=2)
    spec = {"judge": "openai:m", "base_url": state.url + "/v1", "concurrency": 2, "timeout": 1.0}
    shard = tmp_path / "run" / "ledger-shard-0.sqlite"
    seen = {}

    def killer():  # ray.get stays in the main thread; this one kills shard 0's worker mid-run
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and (_stored(shard) < 4 or not (beats / "shard-0.json").exists()):
            time.sleep(0.05)
        seen["pid"] = json.loads((beats / "shard-0.json").read_text())["pid"]
        seen["stored"] = _stored(shard)
        os.kill(seen["pid"], signal.SIGKILL)

    thread = threading.Thread(target=killer)
    try:
        thread.start()
        result = evaluate_ray(data, ["faithfulness"], shards=2, sources=SourcesDescription(judge=spec),
                              ledger=str(ledger), concurrency=2, heartbeat_dir=str(beats))
        thread.join(timeout=5)
        assert result.summary("faithfulness").scored == 24
        assert json.loads((beats / "shard-0.json").read_text())["pid"] != seen["pid"]  # the shard was retried
        with sqlite3.connect(ledger) as db:
            keys = [k for (k,) in db.execute("SELECT key FROM judgments")]
        needed = 24 * 2  # an extraction and a verification per sample
        assert len(keys) == len(set(keys)) == needed
        lost = state.count - needed
        assert 0 <= lost <= 2 and seen["stored"] >= 4  # at most what was in flight at the kill
    finally:
        srv.shutdown()


@pytest.mark.slow
def test_records_and_action_criteria_reach_the_workers(cluster, warranty, tmp_path):
    """The record source is built in each worker from its spec and caches into the run's ledger
    file (no per-shard lookup table to merge); the action criteria travel with the shard."""
    import sqlite3

    from ragmeter.actions import load_action_criteria
    from ragmeter.records import RecordLookup, parse_source

    runs = ragmeter.load_dataset(warranty / "agent_runs.jsonl").samples
    stale = ragmeter.load_dataset(warranty / "stale_fact.jsonl").samples
    data = from_samples(list(runs) + list(stale))
    metrics = ["action_pass_rate", "record_accuracy", "record_coverage"]
    criteria = load_action_criteria(warranty / "criteria.yaml")
    table = str(warranty / "records.jsonl")
    local = ragmeter.evaluate(data, metrics, records=RecordLookup(parse_source(table)), action_criteria=criteria)
    ledger = tmp_path / "ledger.sqlite"
    remote = evaluate_ray(data, metrics, shards=3, sources=SourcesDescription(
                              records=table, records_timeout=5.0, action_criteria=criteria), ledger=str(ledger))
    assert remote.to_dict()["samples"] == local.to_dict()["samples"]
    assert [getattr(o, "value", None) for o in remote.outcomes[remote.measures[0]]] == [0.0, None, 1.0, None, None]
    with sqlite3.connect(ledger) as db:  # a1's and a3's order lookups (ORD-1043, ORD-1042) and s1's price
        stored = sorted(db.execute("SELECT entity, attribute, status FROM record_lookups"))
    assert stored == [("ORD-1042", "product", "value"), ("ORD-1043", "product", "no_record"),
                      ("R2", "replacement_price", "value")]
