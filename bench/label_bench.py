"""Benchmark: the ``eval`` label path against the tools users would otherwise script, every size in one run.

Generates (once, cached under bench/.data/) a JSONL dataset of N samples x 20 retrieved ids with
1 to 5 graded labels each (grades 1-3, about 290 bytes a line), and its qrels and run (top 10)
for trec_eval. Each tool runs in a fresh process and computes P@10, recall@10, hit rate@10, RR@10
and nDCG@10 from the file:

- ``ragmeter eval`` as typed (``--no-save --format json``: every sample's values, the means with
  their 95% bootstrap intervals, both fingerprints);
- ragmeter's API: ``load_dataset`` + ``evaluate`` + ``means()`` (no intervals, as the scripts);
- a plain script around pytrec_eval (Python's json module, the run cut at 10, means only);
- the same script around ranx (``Qrels``/``Run`` from dicts, ``evaluate``) and around
  ir_measures (``calc_aggregate``);
- the trec_eval 10.0 binary on the qrels and run files (``--trec-eval``; not in the ratios);
- the parse floor: a script that only ``json.loads`` every line (``--tools ...,floor``).

The tools are interleaved: each repeat runs every tool once, in a rotating order, one process
per run. Prints per tool the median wall and CPU seconds (user + system, all threads), the peak
memory (max RSS of that process, from ``os.wait4``), the 1-minute load average when its runs
started (median; the machine is shared: other work slows every tool, CPU time less than wall),
the ratios (other tool's time / ragmeter's: above 1, ragmeter is faster) in wall and CPU time,
and the largest difference of each tool's means from pytrec_eval's; then where
``eval --format json``'s time goes, stage by stage, in one process. A benchmark, not a test:
nothing here asserts a time.

    pip install -e ".[test,bench]"
    python bench/label_bench.py [--samples 1000,10000,50000,500000] [--repeat 3] [--trec-eval PATH|none]
        [--tools eval,api,pytrec_eval,ranx,ir_measures]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from trec_bench import ENV, find_trec_eval, load_average, timed, warm_bytecode  # noqa: E402

DATA = Path(__file__).parent / ".data"
K = 10
OURS = ["precision@10", "recall@10", "hit_rate@10", "reciprocal_rank@10", "ndcg@10"]
TREC = ["P_10", "recall_10", "success_10", "recip_rank", "ndcg_cut_10"]
RANX = ["precision@10", "recall@10", "hit_rate@10", "mrr@10", "ndcg@10"]
TOOLS = {"eval": "ragmeter eval", "api": "ragmeter API (means)", "pytrec_eval": "pytrec_eval script",
         "ranx": "ranx script", "ir_measures": "ir_measures script", "trec_eval": "trec_eval 10.0",
         "floor": "parse floor (json)"}


def generate(n: int) -> Path:
    """The dataset (and its qrels/run) for n samples: 20 retrieved ids from 100,000, 1 to 5
    labeled ids (some of them retrieved), grades 1, 2 or 3; written once."""
    path = DATA / f"labels20_{n}.jsonl"
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    rng = random.Random(n)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f, open(path.with_suffix(".qrels"), "w") as fq, open(path.with_suffix(".run"), "w") as fr:
        for i in range(n):
            retrieved = rng.sample(range(100_000), 20)
            labeled = rng.randint(1, 5)
            inside = rng.randint(0, labeled)
            pool = rng.sample(retrieved, inside) + [d for d in rng.sample(range(100_000), 10) if d not in retrieved]
            relevant = {f"d{d}": rng.choice((1, 1, 2, 3)) for d in pool[:labeled]}
            f.write(json.dumps({"id": f"q{i}", "question": f"question {i}", "retrieved": [f"d{d}" for d in retrieved],
                                "relevant": relevant}) + "\n")
            fq.writelines(f"q{i} 0 {d} {g}\n" for d, g in relevant.items())
            fr.writelines(f"q{i} Q0 d{d} {r + 1} {K - r} bench\n" for r, d in enumerate(retrieved[:K]))
    tmp.rename(path)
    return path


def stages(path: str) -> dict:
    """Seconds (CPU) per stage of ``eval --no-save --format json``, in this process."""
    clock = time.process_time
    start = clock()
    from ragmeter.cli import eval_cmd  # noqa: F401  (what the command imports before it runs)
    from ragmeter.engine.evaluate import evaluate
    from ragmeter.io.dataset import load_dataset
    from ragmeter.report.result_json import result_chunks
    from ragmeter.runs import driver  # noqa: F401

    out: dict = {"imports": clock() - start}
    start = clock()
    data = load_dataset(path)
    out["load"] = clock() - start
    start = clock()
    result = evaluate(data, OURS, k=K)
    out["score"] = clock() - start
    start = clock()
    for m in result.measures:
        result.summary(m)
    out["intervals"] = clock() - start
    start = clock()
    with open(os.devnull, "w") as sink:
        for chunk in result_chunks(result):
            sink.write(chunk)
    out["json"] = clock() - start
    out["columns"] = data.columns is not None
    return out


def _read(path: str) -> tuple[dict, dict]:
    """The script's qrels and run (top 10, descending scores) from the JSONL file, with json."""
    qrels, run = {}, {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            qrels[r["id"]] = {d: int(g) for d, g in r["relevant"].items()}
            ids = r["retrieved"][:K]
            run[r["id"]] = {d: float(len(ids) - i) for i, d in enumerate(ids)}
    return qrels, run


def worker(tool: str, path: str) -> dict:
    if tool == "stages":
        return stages(path)
    if tool == "floor":  # what any script reading the file does before any metric: json.loads per line
        with open(path) as f:
            n = sum(1 for line in f if json.loads(line))
        return {o: float(n) for o in OURS}
    if tool == "api":
        from ragmeter.engine.evaluate import evaluate
        from ragmeter.io.dataset import load_dataset

        return evaluate(load_dataset(path), OURS, k=K).means()
    if tool == "pytrec_eval":
        import pytrec_eval

        qrels, run = _read(path)
        per = pytrec_eval.RelevanceEvaluator(qrels, set(TREC)).evaluate(run)
        return {o: sum(v[t] for v in per.values()) / len(per) for o, t in zip(OURS, TREC)}
    if tool == "ranx":
        from ranx import Qrels, Run, evaluate

        qrels, run = _read(path)
        got = evaluate(Qrels(qrels), Run(run), RANX)
        return {o: float(got[r]) for o, r in zip(OURS, RANX)}
    if tool == "ir_measures":
        import ir_measures
        from ir_measures import RR, P, R, Success, nDCG

        qrels, run = _read(path)
        wanted = [P @ K, R @ K, Success @ K, RR @ K, nDCG @ K]
        agg = ir_measures.calc_aggregate(wanted, qrels, run)
        return {o: float(agg[m]) for o, m in zip(OURS, wanted)}
    raise ValueError(tool)


def means_of(tool: str, out: str) -> dict:
    if tool == "trec_eval":
        values = {name: float(value) for name, _, value in (line.split() for line in out.splitlines())}
        return {o: values[t] for o, t in zip(OURS, TREC)}
    if tool == "eval":
        doc = json.loads(out)
        return {o: doc["metrics"][o]["mean"] for o in OURS}
    return json.loads(out)


def command(tool: str, path: Path, trec_eval: str | None) -> list[str]:
    py, me = sys.executable, str(Path(__file__).resolve())
    if tool == "eval":
        return [py, "-m", "ragmeter", "eval", str(path), "-m", ",".join(OURS), "-k", str(K), "--no-save",
                "--format", "json"]
    if tool == "trec_eval":
        measures = ("P.10", "recall.10", "success.10", "recip_rank", "ndcg_cut.10")
        return [str(trec_eval), *[a for m in measures for a in ("-m", m)], str(path.with_suffix(".qrels")),
                str(path.with_suffix(".run"))]
    return [py, me, "--worker", tool, str(path)]


def bench(n: int, tools: list[str], repeat: int, trec_eval: str | None) -> None:
    path = generate(n)
    print(f"\n{n:,} samples x 20 retrieved, 1-5 labeled ({path.stat().st_size / 2**20:.1f} MB), "
          f"five label metrics at k={K}; {repeat} interleaved run(s) per tool, medians", flush=True)
    runs: dict[str, list[tuple[float, float, float, float, str]]] = {t: [] for t in tools}
    for r in range(repeat):
        for tool in tools[r % len(tools):] + tools[:r % len(tools)]:  # a rotating order
            load = load_average()
            seconds, peak, out, cpu = timed(command(tool, path, trec_eval))
            runs[tool].append((seconds, cpu, peak, load, out))
    rows = {}
    for tool in tools:
        got = runs[tool]
        rows[tool] = (statistics.median(g[0] for g in got), statistics.median(g[1] for g in got),
                      max(g[2] for g in got), statistics.median(g[3] for g in got), means_of(tool, got[0][4]))
    ref = rows.get("pytrec_eval")
    print(f"{'':22} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'load':>5}   {'x eval wall/cpu':>15} "
          f"{'x API wall/cpu':>15}  max |diff| vs pytrec_eval")
    for tool in tools:
        wall, cpu, peak, load, means = rows[tool]
        vs = []
        for ours in ("eval", "api"):
            if ours in rows and tool != ours:
                vs.append(f"{wall / rows[ours][0]:6.2f} /{cpu / rows[ours][1]:6.2f}")
            else:
                vs.append(f"{'-':>15}")
        diff = max(abs(means[o] - ref[4][o]) for o in OURS) if ref and tool != "floor" else float("nan")
        print(f"{TOOLS[tool]:22} {wall:8.2f} {cpu:8.2f} {peak:8.0f} {load:5.1f}   {vs[0]:>15} {vs[1]:>15}  "
              f"{diff:.1e}", flush=True)
    if "eval" in rows:
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", "stages", str(path)],
                              capture_output=True, text=True, check=True, env=ENV)
        times = json.loads(done.stdout)
        columns = times.pop("columns")
        print(f"  eval --format json by stage, CPU s in one process (load {load_average():.1f}; columnar: "
              f"{'yes' if columns else 'no'}): " + ", ".join(f"{stage} {sec:.2f}" for stage, sec in times.items()))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], sys.argv[3])))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", default="1000,10000,50000,500000", help="comma-separated dataset sizes")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved runs per tool (medians); "
                                                          "at 500,000 samples at most 2")
    ap.add_argument("--tools", default="eval,api,pytrec_eval,ranx,ir_measures,floor")
    ap.add_argument("--trec-eval", help="the trec_eval binary, added to the tools (default: PATH, else built "
                                        "from ../shared; none: leave it out)")
    args = ap.parse_args()
    tools = args.tools.split(",")
    trec_eval = None if args.trec_eval == "none" else find_trec_eval(args.trec_eval)
    if trec_eval:
        tools.append("trec_eval")
    warm_bytecode()
    print(f"{os.cpu_count()} CPUs; load average {load_average():.1f} at the start")
    for n in (int(x) for x in args.samples.split(",")):
        bench(n, tools, min(args.repeat, 2) if n >= 500_000 else args.repeat, trec_eval)


if __name__ == "__main__":
    main()
