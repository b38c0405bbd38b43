"""Benchmark: ``ragmeter compare`` and ``ragmeter gate`` on two label runs of N samples each, every
size in one run.

Makes (once, cached under bench/.data/) the label dataset of bench/label_bench.py at each size, a
second one with 30% of the ranked lists shuffled (the same questions and labels: a comparable
run), and a run directory of each (``ragmeter eval`` with P@10, recall@10, hit rate@10, RR@10
and nDCG@10). Then, each in a fresh process, interleaved, ``--repeat`` times:

- ``ragmeter compare A B`` and ``ragmeter gate B --baseline A`` as typed;
- the parse floor: a script that reads both results.jsonl files with Python's json module and
  pairs their values (what any tool reading the runs does before any statistics);
- with ``--matrix``: the sign-flip test as ragmeter ran it before it streamed (a 20,000 x n
  matrix of signs per metric, at main 0753add): at 50,000 samples it holds 8 GB a matrix, so
  only the sizes up to ``--matrix-max`` run it.

Prints per command the median wall and CPU seconds (user + system, all threads), the peak
memory (max RSS of that process), the 1-minute load average when its runs started, and the
ratio of its time to the parse floor's (time / floor: how many parse floors the command
costs). A benchmark, not a test: nothing here asserts a time.

    python bench/compare_bench.py [--samples 1000,50000,500000] [--repeat 3] [--matrix] [--matrix-max 20000]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from label_bench import DATA, OURS, K, generate  # noqa: E402
from trec_bench import ENV, load_average, timed, warm_bytecode  # noqa: E402

RUNS = DATA / "runs"


def shuffled(n: int) -> Path:
    """The dataset of ``n`` samples with 30% of its ranked lists shuffled (seeded)."""
    path = DATA / f"labels20b_{n}.jsonl"
    if path.exists():
        return path
    rng = random.Random(7)
    tmp = path.with_suffix(".tmp")
    with open(generate(n)) as f, open(tmp, "w") as g:
        for line in f:
            r = json.loads(line)
            if rng.random() < 0.3:
                rng.shuffle(r["retrieved"])
            g.write(json.dumps(r) + "\n")
    tmp.rename(path)
    return path


def run_dir(data: Path) -> Path:
    """The run directory of ``ragmeter eval`` on ``data`` (made once)."""
    name = data.stem
    found = sorted(RUNS.glob(f"*-{name}"))
    if found and (found[-1] / "summary.json").exists():
        return found[-1]
    subprocess.run([sys.executable, "-m", "ragmeter", "eval", str(data), "-m", ",".join(OURS), "-k", str(K),
                    "--runs-dir", str(RUNS), "--name", name, "--format", "json"], check=True, env=ENV,
                   stdout=subprocess.DEVNULL)
    return sorted(RUNS.glob(f"*-{name}"))[-1]


def worker(tool: str, a: str, b: str) -> None:
    if tool == "floor":
        values = []
        for path in (a, b):
            with open(Path(path) / "results.jsonl") as f:
                rows = [json.loads(line) for line in f]
            values.append({r["id"]: {m: c.get("value") for m, c in r["metrics"].items()} for r in rows})
        pairs = sum(1 for i in values[0] if i in values[1])
        print(pairs)
    elif tool == "matrix":
        import numpy as np

        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from ragmeter.runs import load_run
        from tests.analysis.test_sign_flip import matrix_p

        ra, rb = load_run(a), load_run(b)
        for m in ra.summary:
            va, vb = ra.values(m), rb.values(m)
            d = np.array([vb[i] - va[i] for i in sorted(va) if va[i] is not None and vb.get(i) is not None])
            print(m, matrix_p(d))
    else:
        raise ValueError(tool)


def command(tool: str, a: Path, b: Path) -> list[str]:
    py = sys.executable
    if tool == "compare":
        return [py, "-m", "ragmeter", "compare", str(a), str(b)]
    if tool == "gate":
        return [py, "-m", "ragmeter", "gate", str(b), "--baseline", str(a), "--format", "json"]
    return [py, str(Path(__file__).resolve()), "--worker", tool, str(a), str(b)]


def bench(n: int, tools: list[str], repeat: int) -> None:
    a, b = run_dir(generate(n)), run_dir(shuffled(n))
    print(f"\n{n:,} samples, 5 label metrics, two runs ({(a / 'results.jsonl').stat().st_size / 2**20:.0f} MB of "
          f"results each); {repeat} interleaved run(s) per tool, medians", flush=True)
    got: dict[str, list[tuple[float, float, float, float]]] = {t: [] for t in tools}
    for r in range(repeat):
        for tool in tools[r % len(tools):] + tools[:r % len(tools)]:
            load = load_average()
            seconds, peak, _, cpu = timed(command(tool, a, b))  # (the gate passes: the runs differ by noise)
            got[tool].append((seconds, cpu, peak, load))
    floor = statistics.median(g[0] for g in got["floor"]) if got.get("floor") else float("nan")
    floor_cpu = statistics.median(g[1] for g in got["floor"]) if got.get("floor") else float("nan")
    print(f"{'':22} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'load':>5}   {'/ floor wall, cpu':>17}")
    for tool in tools:
        rows = got[tool]
        if not rows:
            continue
        wall, cpu = statistics.median(g[0] for g in rows), statistics.median(g[1] for g in rows)
        peak, load = max(g[2] for g in rows), statistics.median(g[3] for g in rows)
        print(f"{tool:22} {wall:8.2f} {cpu:8.2f} {peak:8.0f} {load:5.1f}   {wall / floor:7.2f} {cpu / floor_cpu:8.2f}",
              flush=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", default="1000,50000,500000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--matrix", action="store_true", help="also time the sign matrix the test held before")
    ap.add_argument("--matrix-max", type=int, default=20_000, help="the largest size the matrix runs at")
    args = ap.parse_args()
    warm_bytecode()
    print(f"load average {load_average():.1f} at the start")
    for n in (int(x) for x in args.samples.split(",")):
        tools = ["compare", "gate", "floor"] + (["matrix"] if args.matrix and n <= args.matrix_max else [])
        bench(n, tools, min(args.repeat, 2) if n >= 500_000 else args.repeat)


if __name__ == "__main__":
    main()
