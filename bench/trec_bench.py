"""Benchmark: TREC evaluation from files to numbers, each tool in a fresh process.

Generates (once, cached under bench/.data/) a run of 10,000 queries x 1,000 documents
(10M lines, about 5 graded relevant documents per query) and times ragmeter (its Python API,
and ``ragmeter trec`` as typed, start-up and printing included), the trec_eval 10.0 binary,
pytrec_eval, ranx and ir_measures, each computing ndcg_cut_10, map_cut_100, recall_100,
recip_rank and P_10 from the two files, and ``ragmeter trec --memory-limit MB`` for each of
``--memory-limits``; ``--measures all_trec`` (or ``new``: the measures added in ragmeter 0.x,
relstring, infAP, utility, binG, G, dcg, ideal_dcg, ndcg_rel, Rndcg, yaap, rbp, rbp_resid)
times ``ragmeter trec`` against trec_eval on those instead (the other tools lack them). The runs
are interleaved (every command once a round, in a rotating order).
Prints the median and the best wall time of the repeats (kernel time for page faults varies a
lot from run to run on shared machines), the ratios to ragmeter, CPU time, peak memory (max RSS
of that process), the 1-minute load average when its runs started (median: the machine may be
shared, and other work slows two-thread ragmeter more than one-thread trec_eval), the largest
difference from ragmeter's numbers, and whether ``ragmeter trec`` printed trec_eval's bytes;
for each memory limit its seconds, peak memory and whether its output is byte for byte the
unlimited one.

``--small``: start-up instead, on trec_eval's own test files (tests/data/trec_eval: 1,500-line
runs): ``ragmeter trec`` (the installed command), trec_eval and a pytrec_eval script on each
quicktest line they can run, median and best of ``--repeat`` fresh processes, with the load.

trec_eval: ``--trec-eval PATH``, else ``trec_eval`` on PATH, else the binary built by
``../shared/reference/trec_eval-src/build`` when that folder is there.

    pip install -e '.[bench]'
    python bench/trec_bench.py [--queries 10000] [--docs 1000] [--repeat 3] [--layout ranked|sorted|shuffled]
        [--memory-limits 1024,512,256] [--measures five|all_trec|new] [--trec-eval PATH]
    python bench/trec_bench.py --small [--repeat 20]

A benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gen_trec import generate  # noqa: E402

NAMES = ["ndcg_cut_10", "map_cut_100", "recall_100", "recip_rank", "P_10"]
MEASURE_SETS = {
    "five": ["ndcg_cut.10", "map_cut.100", "recall.100", "recip_rank", "P.10"],
    "all_trec": ["all_trec"],
    "new": ["relstring", "infAP", "utility", "binG", "G", "dcg", "ideal_dcg", "ndcg_rel", "Rndcg", "yaap", "rbp",
            "rbp_resid"],
}


def worker(tool: str, qrels: str, run: str) -> dict:
    if tool == "ragmeter":
        from ragmeter.trec import evaluate_trec

        r = evaluate_trec(qrels, run, ["ndcg_cut.10", "map_cut.100", "recall.100", "recip_rank", "P.10"])
        return {n: r.mean(n) for n in NAMES}
    if tool == "pytrec_eval":
        import pytrec_eval

        with open(qrels) as fq, open(run) as fr:
            q, r = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
        per = pytrec_eval.RelevanceEvaluator(q, {"ndcg_cut.10", "map_cut.100", "recall.100", "recip_rank", "P.10"}
                                             ).evaluate(r)
        return {n: sum(v[n] for v in per.values()) / len(per) for n in NAMES}
    if tool == "ranx":
        from ranx import Qrels, Run, evaluate

        res = evaluate(Qrels.from_file(qrels, kind="trec"), Run.from_file(run, kind="trec"),
                       ["ndcg@10", "map@100", "recall@100", "mrr", "precision@10"])
        return dict(zip(NAMES, (res["ndcg@10"], res["map@100"], res["recall@100"], res["mrr"], res["precision@10"])))
    if tool == "ir_measures":
        import ir_measures
        from ir_measures import AP, RR, P, R, nDCG

        agg = ir_measures.calc_aggregate([nDCG @ 10, AP @ 100, R @ 100, RR, P @ 10],
                                         ir_measures.read_trec_qrels(qrels), ir_measures.read_trec_run(run))
        return dict(zip(NAMES, (agg[nDCG @ 10], agg[AP @ 100], agg[R @ 100], agg[RR], agg[P @ 10])))
    raise ValueError(tool)


def load_average() -> float:
    """The 1-minute load average (NaN where ``/proc/loadavg`` is not there)."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


#: The children's environment: byte code written and read (a session that sets
#: PYTHONDONTWRITEBYTECODE would otherwise compile every module of ragmeter on every run).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def warm_bytecode() -> None:
    """Byte-compile ragmeter once, as an installed package is, before anything is timed."""
    import ragmeter

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(ragmeter.__file__).parent)], env=ENV,
                   check=True, stdout=subprocess.DEVNULL)


def timed(cmd: list[str]) -> tuple[float, float, str, float]:
    """Wall seconds, peak RSS (MB) of that one child process, its stdout, and its CPU seconds
    (user + system, all threads: on a busy machine a lower bound of the wall-time ratio to a
    single-threaded tool that ragmeter's two threads would reach on a quiet one)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd[2:4]} failed: {err.strip()[-300:]}")
    return seconds, usage.ru_maxrss / 1024, out, usage.ru_utime + usage.ru_stime


def relaid(run: Path, layout: str) -> Path:
    """The run with its lines in another order (made once, cached next to it, in a child
    process: a child's peak memory counts what its parent held when it was forked)."""
    if layout == "ranked":
        return run
    out = run.with_name(f"run.{layout}.txt")
    if not out.exists():
        print(f"writing the {layout} run ...", file=sys.stderr)
        subprocess.run([sys.executable, __file__, "--relayout", str(run), layout, str(out)], check=True)
    return out


def relayout(run: str, layout: str, out: str) -> None:
    lines = Path(run).read_bytes().splitlines(keepends=True)
    if layout == "sorted":
        lines.sort()
    else:
        random.Random(0).shuffle(lines)
    Path(out).write_bytes(b"".join(lines))


def find_trec_eval(given: str | None) -> str | None:
    if given:
        return given
    on_path = shutil.which("trec_eval")
    if on_path:
        return on_path
    build = Path(__file__).resolve().parent.parent.parent / "shared" / "reference" / "trec_eval-src" / "build"
    if build.exists():
        built = subprocess.run([str(build)], capture_output=True, text=True, check=False)
        if built.returncode == 0:
            return built.stdout.strip()
    return None


def trec_eval_values(text: str, names: list[str] = NAMES) -> dict:
    values = {}
    for line in text.splitlines():
        name, _, value = line.split()
        if name in names:
            values[name] = float(value)
    return {n: values[n] for n in names}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool (median reported)")
    ap.add_argument("--tools", default="ragmeter,ragmeter_cli,pytrec_eval,ranx,ir_measures,trec_eval")
    ap.add_argument("--layout", choices=["ranked", "sorted", "shuffled"], default="ranked",
                    help="line order: topic by topic in rank order (as systems write runs), the lines sorted as "
                         "text (topics together, ranks scrambled), or shuffled")
    ap.add_argument("--memory-limits", default="1024,512,256",
                    help="MB values for ragmeter trec --memory-limit ('' for none)")
    ap.add_argument("--trec-eval", help="the trec_eval 10.0 binary (default: on PATH, or built from ../shared)")
    ap.add_argument("--measures", choices=list(MEASURE_SETS), default="five",
                    help="five (every tool), all_trec or new (ragmeter trec and trec_eval only)")
    ap.add_argument("--small", action="store_true", help="start-up on trec_eval's own test files instead")
    ap.add_argument("--worker", nargs=3, metavar=("TOOL", "QRELS", "RUN"), help=argparse.SUPPRESS)
    ap.add_argument("--relayout", nargs=3, metavar=("RUN", "LAYOUT", "OUT"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.relayout:
        relayout(*a.relayout)
        return
    if a.worker:
        print(json.dumps(worker(*a.worker)))
        return
    if a.small:
        small(a)
        return

    data = Path(__file__).parent / ".data" / f"{a.queries}x{a.docs}"
    qrels, run = data / "qrels.txt", data / "run.txt"
    if not run.exists():
        print(f"generating {a.queries} x {a.docs} ...", file=sys.stderr)
        generate(a.queries, a.docs, data)
    run = relaid(run, a.layout)
    print(f"{a.queries} queries x {a.docs} docs = {a.queries * a.docs:,} run lines "
          f"({run.stat().st_size / 2**20:.0f} MiB, {a.layout}); median of {a.repeat} interleaved runs; each tool "
          f"in a fresh process; {os.cpu_count()} CPUs, load average {load_average():.1f} at the start\n")
    measures = [x for m in MEASURE_SETS[a.measures] for x in ("-m", m)]
    cli = [sys.executable, "-m", "ragmeter", "trec", *measures]  # the command, start-up and printing included
    commands = {}
    tools = a.tools.split(",")
    if a.measures != "five":
        tools = [t for t in tools if t in ("ragmeter_cli", "trec_eval")]
        print(f"-m {' -m '.join(MEASURE_SETS[a.measures])}: ragmeter trec and trec_eval only\n")
    for tool in tools:
        if tool == "trec_eval":
            binary = find_trec_eval(a.trec_eval)
            if not binary:
                print("trec_eval: not on PATH and ../shared/reference/trec_eval-src/build not found, skipped",
                      file=sys.stderr)
                continue
            commands[tool] = [binary, *measures, str(qrels), str(run)]
        elif tool == "ragmeter_cli":
            commands[tool] = [*cli, str(qrels), str(run)]
        else:
            commands[tool] = [sys.executable, __file__, "--worker", tool, str(qrels), str(run)]
    for limit in (x for x in a.memory_limits.split(",") if x.strip()):
        commands[f"--memory-limit {float(limit):g}"] = [*cli, "--memory-limit", f"{float(limit):g}", str(qrels),
                                                         str(run)]
    warm_bytecode()
    runs: dict[str, list] = {tool: [] for tool in commands}
    names = list(commands)
    for r in range(a.repeat):  # interleaved: every tool once a round, in a rotating order
        for tool in names[r % len(names):] + names[:r % len(names)]:
            if tool not in runs:
                continue
            load = load_average()
            try:
                runs[tool].append((*timed(commands[tool]), load))
            except (RuntimeError, FileNotFoundError) as exc:
                print(f"{tool}: skipped ({exc})", file=sys.stderr)
                del runs[tool]
    rows, reference, printed = [], None, {}
    for tool, got in runs.items():
        if tool.startswith("--memory-limit"):
            continue
        seconds = statistics.median(r[0] for r in got)
        best = min(r[0] for r in got)
        rss = max(r[1] for r in got)
        if tool in ("trec_eval", "ragmeter_cli"):
            printed[tool] = got[0][2]
        if a.measures != "five":
            values, diff = {}, float("nan")
        else:
            values = trec_eval_values(got[0][2]) if tool in ("trec_eval", "ragmeter_cli") else json.loads(got[0][2])
            if tool == "ragmeter":
                reference = values
            diff = max(abs(values[n] - reference[n]) for n in NAMES) if reference else float("nan")
        rows.append((tool, seconds, best, rss, diff, values, statistics.median(r[3] for r in got),
                     statistics.median(r[4] for r in got)))
    base = next((r for r in rows if r[0] == "ragmeter"), None) or next((r for r in rows if r[0] == "ragmeter_cli"),
                                                                       None)
    print(f"{'tool':<13} {'median s':>9} {'x ragmeter':>11} {'best s':>7} {'x ragmeter':>11} {'cpu s':>6} "
          f"{'peak MB':>8} {'load':>5}  max |diff| vs ragmeter")
    for tool, seconds, best, rss, diff, _, cpu, load in rows:
        ratio = f"{seconds / base[1]:.1f}x" if base else "-"
        best_ratio = f"{best / base[2]:.1f}x" if base else "-"
        print(f"{tool:<13} {seconds:>9.2f} {ratio:>11} {best:>7.2f} {best_ratio:>11} {cpu:>6.2f} {rss:>8.0f} "
              f"{load:>5.1f}  {diff:.1e}")
    if rows and rows[0][5]:
        print("\nragmeter: " + ", ".join(f"{n}={v:.6f}" for n, v in rows[0][5].items()))
    by_tool = {r[0]: r for r in rows}
    if "trec_eval" in by_tool and "ragmeter_cli" in by_tool:
        te, rc = by_tool["trec_eval"], by_tool["ragmeter_cli"]
        same = "identical" if printed["trec_eval"] == printed["ragmeter_cli"] else "DIFFERENT"
        print(f"trec_eval / ragmeter trec: median {te[1] / rc[1]:.1f}x (load {te[7]:.1f} / {rc[7]:.1f}), "
              f"best {te[2] / rc[2]:.1f}x, CPU time {te[6] / rc[6]:.1f}x; printed output {same}")
    if "pytrec_eval" in by_tool and "ragmeter_cli" in by_tool:
        pt, rc = by_tool["pytrec_eval"], by_tool["ragmeter_cli"]
        print(f"pytrec_eval / ragmeter trec: median {pt[1] / rc[1]:.1f}x (load {pt[7]:.1f} / {rc[7]:.1f}), "
              f"best {pt[2] / rc[2]:.1f}x, CPU time {pt[6] / rc[6]:.1f}x")
    limits = [t for t in runs if t.startswith("--memory-limit")]
    if limits:
        unlimited = printed.get("ragmeter_cli") or timed([*cli, str(qrels), str(run)])[2]
        print(f"\n{'ragmeter trec':<22} {'median s':>9} {'cpu s':>6} {'peak MB':>8} {'load':>5}  output")
        for tool in limits:
            got = runs[tool]
            limit = float(tool.split()[-1])
            same = "identical" if got[0][2] == unlimited else "DIFFERENT"
            peak = max(r[1] for r in got)
            over = "" if peak <= limit else "  (OVER THE LIMIT)"
            print(f"{tool:<22} {statistics.median(r[0] for r in got):>9.2f} "
                  f"{statistics.median(r[3] for r in got):>6.2f} {peak:>8.0f} "
                  f"{statistics.median(r[4] for r in got):>5.1f}  {same}{over}")


SMALL = [  # (name, ragmeter / trec_eval options, rel_info, results, whether pytrec_eval computes it)
    ("official", [], "qrels.test", "results.test", True),
    ("all_trec -q", ["-q", "-m", "all_trec"], "qrels.test", "results.test", False),
    ("all_trec -q -c -M100", ["-q", "-c", "-M100", "-m", "all_trec"], "qrels.test", "results.trunc", False),
    ("all_prefs -R prefs", ["-q", "-m", "all_prefs", "-R", "prefs"], "prefs.test", "prefs.results.test", False),
    ("qrels_jg -R qrels_jg", ["-q", "-m", "qrels_jg", "-R", "qrels_jg"], "qrels.123", "results.test", False),
]
PYTREC_OFFICIAL = ("import pytrec_eval, sys\n"
                   "q = pytrec_eval.parse_qrel(open(sys.argv[1])); r = pytrec_eval.parse_run(open(sys.argv[2]))\n"
                   "e = pytrec_eval.RelevanceEvaluator(q, {'num_ret', 'num_rel', 'num_rel_ret', 'map', 'gm_map',"
                   " 'Rprec', 'bpref', 'recip_rank', 'iprec_at_recall', 'P'})\n"
                   "per = e.evaluate(r)\n"
                   "print({m: sum(v[m] for v in per.values()) / len(per) for m in next(iter(per.values()))})")


def timed_small(cmd: list[str]) -> tuple[float, float, str, float]:
    """:func:`timed`, with the peak memory GNU time reports for the command itself (a child's
    own high-water mark starts at its parent's size when it is forked from Python)."""
    gnu_time = Path("/usr/bin/time")
    if not gnu_time.exists():
        return timed(cmd)
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        seconds, _, out, cpu = timed([str(gnu_time), "-f", "%M", "-o", rss.name, *cmd])
        return seconds, int(Path(rss.name).read_text().split()[-1]) / 1024, out, cpu


def small(a) -> None:
    """Start-up: each tool in a fresh process on trec_eval's test files, median and best."""
    ref = Path(__file__).resolve().parent.parent / "tests" / "data" / "trec_eval"
    script = Path(sys.executable).with_name("ragmeter")
    ragmeter = [str(script)] if script.exists() else [sys.executable, "-m", "ragmeter"]
    binary = find_trec_eval(a.trec_eval)
    repeat = max(a.repeat, 5)
    warm_bytecode()
    print(f"start-up on trec_eval's test files ({ref}); median and best of {repeat} fresh processes each, "
          f"interleaved; {os.cpu_count()} CPUs\n")
    print(f"{'case':<22} {'tool':<12} {'median s':>8} {'best s':>7} {'cpu s':>6} {'peak MB':>8} {'load':>5}  output")
    for name, options, rel_info, results, pytrec in SMALL:
        files = [str(ref / rel_info), str(ref / results)]
        commands = {"ragmeter": [*ragmeter, "trec", *options, *files]}
        if binary:
            commands["trec_eval"] = [binary, *options, *files]
        if pytrec:
            try:
                import pytrec_eval  # noqa: F401

                commands["pytrec_eval"] = [sys.executable, "-c", PYTREC_OFFICIAL, *files]
            except ImportError:
                pass
        got: dict[str, list] = {t: [] for t in commands}
        for _ in range(repeat):
            for tool, cmd in commands.items():
                got[tool].append((*timed_small(cmd), load_average()))
        for tool, runs in got.items():
            same = ""
            if tool == "ragmeter" and "trec_eval" in got:
                same = "identical to trec_eval" if runs[0][2] == got["trec_eval"][0][2] else "DIFFERENT"
            median = statistics.median(r[0] for r in runs)
            print(f"{name:<22} {tool:<12} {median:>8.3f} {min(r[0] for r in runs):>7.3f} "
                  f"{statistics.median(r[3] for r in runs):>6.3f} {max(r[1] for r in runs):>8.0f} "
                  f"{statistics.median(r[4] for r in runs):>5.1f}  {same}")
        if "pytrec_eval" in got:
            theirs, ours = (statistics.median(r[0] for r in got[t]) for t in ("pytrec_eval", "ragmeter"))
            print(f"{'':<22} pytrec_eval / ragmeter trec: {theirs / ours:.1f}x")


if __name__ == "__main__":
    main()
