"""Benchmark: ``ragmeter watch LOG --judge none --once`` on request logs of N requests, every size in
one run (is it linear?).

Generates (once, cached under bench/.data/) a log of N requests in ragmeter's own shape (the
test suite's request line: an id, a time, a question, one retrieved chunk with its text, an
answer: about 150 bytes a line). Each size runs, in fresh processes and interleaved:

- ``ragmeter watch LOG --judge none --once --state DIR`` from an empty state (every request read,
  sampled in, scored as not computed for want of a judge, recorded in scored.jsonl);
- the parse floor: a script that reads the log and ``json.loads`` every line (what any tool that
  reads the log does);

and prints the median wall and CPU seconds, the requests per second (wall and CPU), the peak
memory, the 1-minute load average when its runs started, and the ratio to the parse floor. A
benchmark, not a test: nothing here asserts a time.

    python bench/watch_bench.py [--requests 10000,100000,1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from trec_bench import ENV, load_average, timed, warm_bytecode  # noqa: E402

DATA = Path(__file__).parent / ".data"


def generate(n: int) -> Path:
    from tests.live_judge import request_line

    path = DATA / f"requests_{n}.jsonl"
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for i in range(n):
            f.write(request_line(i))
    tmp.rename(path)
    return path


def timed_to_files(cmd: list[str], out: Path) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds of one child whose output goes to files in
    ``out`` (watch writes a progress line a poll: through a pipe nobody reads yet, it would wait)."""
    start = time.perf_counter()
    with open(out / "stdout", "wb") as so, open(out / "stderr", "wb") as se:
        proc = subprocess.Popen(cmd, stdout=so, stderr=se, env=ENV)
        _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd[2:4]} failed: {(out / 'stderr').read_text()[-300:]}")
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def worker(path: str) -> None:
    import json

    n = 0
    with open(path, "rb") as f:
        for line in f:
            json.loads(line)
            n += 1
    print(n)


def bench(n: int, repeat: int) -> None:
    log = generate(n)
    print(f"\n{n:,} requests ({log.stat().st_size / 2**20:.0f} MB); {repeat} interleaved run(s) per tool, medians",
          flush=True)
    got: dict[str, list[tuple[float, float, float, float]]] = {"watch": [], "floor": []}
    for r in range(repeat):
        for tool in (["watch", "floor"] if r % 2 == 0 else ["floor", "watch"]):
            load = load_average()
            if tool == "watch":
                state = Path(tempfile.mkdtemp(prefix="ragmeter-watch-bench-"))
                try:
                    cmd = [sys.executable, "-m", "ragmeter", "watch", str(log), "--judge", "none", "--once",
                           "--state", str(state / "state"), "--port", "0"]
                    seconds, peak, cpu = timed_to_files(cmd, state)
                    scored = sum(1 for _ in open(state / "state" / "scored.jsonl"))
                    assert scored == n, f"{scored} of {n} requests recorded"
                finally:
                    shutil.rmtree(state, ignore_errors=True)
            else:
                seconds, peak, _, cpu = timed([sys.executable, str(Path(__file__).resolve()), "--worker", str(log)])
            got[tool].append((seconds, cpu, peak, load))
    floor = statistics.median(g[0] for g in got["floor"])
    floor_cpu = statistics.median(g[1] for g in got["floor"])
    print(f"{'':8} {'wall s':>8} {'cpu s':>8} {'req/s wall':>11} {'req/s cpu':>10} {'peak MB':>8} {'load':>5}   "
          f"{'/ floor wall, cpu':>17}")
    for tool, rows in got.items():
        wall, cpu = statistics.median(g[0] for g in rows), statistics.median(g[1] for g in rows)
        peak, load = max(g[2] for g in rows), statistics.median(g[3] for g in rows)
        print(f"{tool:8} {wall:8.2f} {cpu:8.2f} {n / wall:11,.0f} {n / cpu:10,.0f} {peak:8.0f} {load:5.1f}   "
              f"{wall / floor:7.2f} {cpu / floor_cpu:8.2f}", flush=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    warm_bytecode()
    print(f"load average {load_average():.1f} at the start")
    for n in (int(x) for x in args.requests.split(",")):
        bench(n, min(args.repeat, 2) if n >= 1_000_000 else args.repeat)


if __name__ == "__main__":
    main()
