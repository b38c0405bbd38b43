"""``ragmeter eval --block N`` streams a dataset and records the in-memory run's numbers."""

from __future__ import annotations

import json
import random

import pytest

import ragmeter
from ragmeter.io.jsonl_blocks import scan
from ragmeter.runs import list_runs

METRICS = "precision,recall,hit_rate,reciprocal_rank,ndcg,average_precision,ndcg(gain='exp')"


def generated(tmp_path, n=5000, seed=0):
    rnd = random.Random(seed)
    path = tmp_path / "big.jsonl"
    with open(path, "w") as f:
        for i in range(n):
            ranked = rnd.sample(range(50), 10)
            labels = {f"c{c}": rnd.choice([0, 1, 2]) for c in rnd.sample(range(50), rnd.randint(0, 4))}
            f.write(json.dumps({"id": f"q{i}", "retrieved": [f"c{c}" for c in ranked], "relevant": labels}) + "\n")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("block", [1, 7, 1000])
def test_streamed_run_equals_the_in_memory_run(cli, tmp_path, block):
    path = generated(tmp_path, n=2000, seed=block)
    whole_dir, stream_dir = tmp_path / "whole", tmp_path / "stream"
    assert cli("eval", path, "--metrics", METRICS, "--runs-dir", whole_dir).exit_code == 0
    out = cli("eval", path, "--metrics", METRICS, "--runs-dir", stream_dir, "--block", block)
    assert out.exit_code == 0, out.output
    (a,), (b,) = list_runs(whole_dir), list_runs(stream_dir)
    assert a.summary == b.summary  # means (fsum), coverage and the seeded intervals, exactly
    assert a.results == b.results
    assert a.setup["dataset"]["fingerprint"] == b.setup["dataset"]["fingerprint"]
    assert a.setup["metrics"] == b.setup["metrics"] and b.complete
    assert (a.path / "samples.jsonl").read_text() == (b.path / "samples.jsonl").read_text()


def test_scan_matches_the_in_memory_fingerprints(warranty, tmp_path):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl")
    fp, tfp, n = scan(warranty / "dataset.jsonl")
    assert (fp, tfp, n) == (data.fingerprint, data.testset_fingerprint, 6)


def test_duplicate_ids_are_refused_before_scoring(tmp_path, cli):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"id": i, "retrieved": ["a"], "relevant": ["a"]}) + "\n" for i in [1, 2, 3, 2]))
    out = cli("eval", path, "--block", "2", "--no-save")
    assert out.exit_code == 2
    assert 'line 4 (id "2"), field "id": duplicate sample id (first seen on line 2)' in out.output
