"""Benchmark: the ``eval`` label path against pytrec_eval and trec_eval, 50,000 and 500,000 samples.

Generates (once, cached under bench/.data/) a JSONL dataset of N samples x 20 retrieved ids with
1 to 7 graded labels each (about 290 bytes a line), and its qrels and run (top 10) for trec_eval.
Each tool runs in a fresh process and computes P@10, recall@10, hit rate@10, RR@10 and nDCG@10
from the file:

- ``ragmeter eval`` as typed (``--no-save --format json``: every sample's values and the means
  with their 95% bootstrap intervals), and with ``--block`` (streamed, bounded memory);
- ragmeter's API: ``load_dataset`` + ``evaluate`` + ``means()`` (no intervals, as pytrec_eval);
- a plain script around pytrec_eval (Python's json module, the run cut at 10, means);
- the trec_eval 10.0 binary on the qrels and run files (``-m P.10 -m recall.10 -m success.10
  -m recip_rank -m ndcg_cut.10``).

Prints wall seconds, CPU seconds, peak memory (max RSS of that process, from ``os.wait4``), the
ratio of each tool's time to ragmeter's (above 1: ragmeter is faster), and the largest difference
of ragmeter's means from pytrec_eval's; then where ``eval --format json``'s time goes, stage by
stage, in one process (imports, loading, label scoring, summaries with their bootstrap
intervals, the JSON text; ``columns``: whether the loader gave the columnar dataset). A
benchmark, not a test: nothing here asserts a time.

    python bench/label_bench.py [--samples 50000,500000] [--block 50000] [--trec-eval PATH|none]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from trec_bench import find_trec_eval, timed

DATA = Path(__file__).parent / ".data"
K = 10
OURS = ["precision@10", "recall@10", "hit_rate@10", "reciprocal_rank@10", "ndcg@10"]
TREC = ["P_10", "recall_10", "success_10", "recip_rank", "ndcg_cut_10"]


def generate(n: int) -> Path:
    """The dataset (and its qrels/run) for n samples, written once."""
    path = DATA / f"labels_{n}.jsonl"
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    rng = random.Random(n)
    with open(path, "w") as f, open(path.with_suffix(".qrels"), "w") as fq, open(path.with_suffix(".run"), "w") as fr:
        for i in range(n):
            retrieved = rng.sample(range(100_000), 20)
            pool = rng.sample(retrieved, rng.randint(0, 4)) + rng.sample(range(100_000), rng.randint(1, 3))
            relevant = {f"d{d}": rng.choice((1, 1, 2, 3)) for d in pool}
            f.write(json.dumps({"id": f"q{i}", "question": f"question {i}", "retrieved": [f"d{d}" for d in retrieved],
                                "relevant": relevant}) + "\n")
            fq.writelines(f"q{i} 0 {d} {g}\n" for d, g in relevant.items())
            fr.writelines(f"q{i} Q0 d{d} {r + 1} {K - r} bench\n" for r, d in enumerate(retrieved[:K]))
    return path


def stages(path: str) -> dict:
    """Seconds per stage of ``eval --no-save --format json``, in this process."""
    clock = time.perf_counter
    start = clock()
    from ragmeter.cli import eval_cmd  # noqa: F401  (what the command imports before it runs)
    from ragmeter.engine.evaluate import evaluate
    from ragmeter.io.dataset import load_dataset
    from ragmeter.report.result_json import result_text
    from ragmeter.runs import evaluation  # noqa: F401

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
    out["summaries"] = clock() - start
    start = clock()
    result_text(result)
    out["json"] = clock() - start
    out["columns"] = data.columns is not None
    return out


def worker(tool: str, path: str) -> dict:
    if tool == "stages":
        return stages(path)
    if tool == "api":
        from ragmeter.engine.evaluate import evaluate
        from ragmeter.io.dataset import load_dataset

        return evaluate(load_dataset(path), OURS, k=K).means()
    if tool == "pytrec_eval":
        import pytrec_eval

        qrels, run = {}, {}
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                qrels[r["id"]] = {d: int(g) for d, g in r["relevant"].items()}
                ids = r["retrieved"][:K]
                run[r["id"]] = {d: float(len(ids) - i) for i, d in enumerate(ids)}
        per = pytrec_eval.RelevanceEvaluator(qrels, set(TREC)).evaluate(run)
        return {o: sum(v[t] for v in per.values()) / len(per) for o, t in zip(OURS, TREC)}
    raise ValueError(tool)


def means_of(tool: str, out: str) -> dict:
    if tool in ("api", "pytrec_eval"):
        return json.loads(out)
    if tool == "trec_eval":
        values = {name: float(value) for name, _, value in (line.split() for line in out.splitlines())}
        return {o: values[t] for o, t in zip(OURS, TREC)}
    doc = json.loads(out)
    return {o: doc["metrics"][o]["mean"] for o in OURS}


def commands(path: Path, block: int, trec_eval: str | None) -> dict[str, list[str]]:
    py, me = sys.executable, str(Path(__file__).resolve())
    cli = [py, "-m", "ragmeter", "eval", str(path), "-m", ",".join(OURS), "-k", str(K), "--no-save", "--format", "json"]
    out = {"ragmeter eval": cli, f"ragmeter eval --block {block}": cli + ["--block", str(block)],
           "ragmeter API (means)": [py, me, "--worker", "api", str(path)],
           "pytrec_eval script": [py, me, "--worker", "pytrec_eval", str(path)]}
    if trec_eval:
        measures = ("P.10", "recall.10", "success.10", "recip_rank", "ndcg_cut.10")
        out["trec_eval 10.0"] = [trec_eval, *[a for m in measures for a in ("-m", m)],
                                 str(path.with_suffix(".qrels")), str(path.with_suffix(".run"))]
    return out


def tool_of(label: str) -> str:
    return {"ragmeter API (means)": "api", "pytrec_eval script": "pytrec_eval", "trec_eval 10.0": "trec_eval"}.get(
        label, "cli")


def bench(n: int, block: int, trec_eval: str | None) -> None:
    path = generate(n)
    print(f"\n{n:,} samples x 20 retrieved ({path.stat().st_size / 2**20:.1f} MB), five label metrics at k={K}")
    rows = {}
    print(f"{'':30} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'pytrec/this':>12} {'max |diff| vs pytrec_eval':>26}")
    cmds = commands(path, block, trec_eval)
    for label in ["pytrec_eval script", *[c for c in cmds if c != "pytrec_eval script"]]:  # the reference first
        seconds, peak, out, cpu = timed(cmds[label])
        rows[label] = (seconds, cpu, peak, means_of(tool_of(label), out))
        ref = rows["pytrec_eval script"]
        diff = max(abs(rows[label][3][o] - ref[3][o]) for o in OURS)
        print(f"{label:30} {seconds:8.2f} {cpu:8.2f} {peak:8.0f} {ref[0] / seconds:12.2f} {diff:26.2e}", flush=True)
    for ours in ("ragmeter eval", f"ragmeter eval --block {block}", "ragmeter API (means)"):
        for other in ("pytrec_eval script", "trec_eval 10.0"):
            if other in rows:
                print(f"  {other} / {ours}: wall {rows[other][0] / rows[ours][0]:.2f}x, "
                      f"cpu {rows[other][1] / rows[ours][1]:.2f}x")
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", "stages", str(path)],
                          capture_output=True, text=True, check=True)
    times = json.loads(done.stdout)
    columns = times.pop("columns")
    print(f"  eval --format json by stage, one process (columnar load: {'yes' if columns else 'no'}): "
          + ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in times.items()))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], sys.argv[3])))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", default="50000,500000", help="comma-separated dataset sizes")
    ap.add_argument("--block", type=int, default=50_000, help="--block for the streamed eval")
    ap.add_argument("--trec-eval", help="the trec_eval binary (default: PATH, else built from ../shared; "
                                              "none: leave it out)")
    args = ap.parse_args()
    trec_eval = None if args.trec_eval == "none" else find_trec_eval(args.trec_eval)
    subprocess.run([sys.executable, "-c", "import ragmeter"], check=True)  # warm the byte-code cache
    for n in (int(x) for x in args.samples.split(",")):
        bench(n, args.block, trec_eval)


if __name__ == "__main__":
    main()
