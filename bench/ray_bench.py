"""Benchmark: judged samples per second on the local engine and on Ray with 1, 2 and 4
workers, against the test judge server answering after a fixed delay; and a streamed TREC
evaluation of a run larger than a memory cap, with its peak memory.

    pip install -e '.[test,ray]'
    python bench/ray_bench.py [--samples 200] [--delay 0.2] [--concurrency 8]

A benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ragmeter  # noqa: E402
from ragmeter.engine.distributed import evaluate_ray  # noqa: E402
from ragmeter.evidence.sources import SourcesDescription  # noqa: E402
from ragmeter.judges import Judge, OpenAIBackend  # noqa: E402
from ragmeter.ledger import Ledger  # noqa: E402
from tests import judge_server, live_judge  # noqa: E402
from tests.test_ray_engine import dataset  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--trec-cap-mb", type=float, default=300)
    a = ap.parse_args()
    os.environ["OPENAI_API_KEY"] = "k"
    srv, state = judge_server.start(live_judge.over_http)
    state.delay = a.delay
    data = dataset(a.samples, seed=11)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        judge = Judge(OpenAIBackend("m", base_url=state.url + "/v1", api_key="k", concurrency=a.concurrency),
                      ledger=Ledger(Path(tmp) / "local.sqlite"))
        ragmeter.evaluate(data, ["faithfulness"], judge=judge)
        rows.append(("local", time.perf_counter() - start))
        import ray

        for workers in (1, 2, 4):
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "k"}})
            start = time.perf_counter()
            evaluate_ray(data, ["faithfulness"], shards=workers, concurrency=a.concurrency,
                         sources=SourcesDescription(judge={"judge": "openai:m", "base_url": state.url + "/v1",
                                                           "concurrency": a.concurrency}),
                         ledger=str(Path(tmp) / f"ray{workers}" / "ledger.sqlite"))
            rows.append((f"ray x{workers}", time.perf_counter() - start))
            ray.shutdown()
    srv.shutdown()
    print(f"{a.samples} samples, faithfulness (2 judge calls each), judge delay {a.delay}s, "
          f"cluster-wide concurrency {a.concurrency}")
    for name, seconds in rows:
        print(f"{name:<8} {seconds:7.2f} s  {a.samples / seconds:6.1f} samples/s")

    run = ROOT / "bench" / ".data" / "10000x1000" / "run.txt"
    if run.exists():
        code = ("import resource, sys; from ragmeter.trec import evaluate_trec; "
                f"r = evaluate_trec('{run.parent / 'qrels.txt'}', '{run}', ['ndcg_cut.10', 'map_cut.100'], "
                f"memory_limit_mb={a.trec_cap_mb}); "
                "print(r.mean('ndcg_cut_10'), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split()
        print(f"streamed TREC, {run.stat().st_size / 2**20:.0f} MiB run, cap {a.trec_cap_mb} MB: "
              f"ndcg_cut_10 {float(out[0]):.6f}, peak {out[1]} MB")
    print(f"(this process: peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB)")


if __name__ == "__main__":
    main()
