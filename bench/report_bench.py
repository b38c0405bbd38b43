"""Benchmark: ``ragmeter report RUN --html F`` on label runs of N samples, every size in one run.

Uses the run directories bench/compare_bench.py makes (``ragmeter eval`` of bench/label_bench.py's
dataset, five label metrics at k=10; made once under bench/.data/runs). Each size runs, in fresh
processes and interleaved:

- ``ragmeter report RUN --html F`` (past 1,000 samples: the page and its pages folder);
- the parse floor: a script that reads the run's samples.jsonl and results.jsonl with Python's
  json module (what any report of every sample reads);

and prints the median wall and CPU seconds, the peak memory, the page's size and the pages
folder's, the 1-minute load average when its runs started, and the ratio to the parse floor. A
benchmark, not a test: nothing here asserts a time.

    python bench/report_bench.py [--samples 1000,50000,500000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from compare_bench import run_dir  # noqa: E402
from label_bench import generate  # noqa: E402
from trec_bench import load_average, timed, warm_bytecode  # noqa: E402


def worker(run: str) -> None:
    import json

    n = 0
    for name in ("samples.jsonl", "results.jsonl"):
        with open(Path(run) / name, "rb") as f:
            for line in f:
                json.loads(line)
                n += 1
    print(n)


def size(path: Path) -> float:
    """MB of a file, or of every file in a folder."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.iterdir()) / 2**20
    return path.stat().st_size / 2**20 if path.exists() else 0.0


def bench(n: int, repeat: int) -> None:
    run = run_dir(generate(n))
    print(f"\n{n:,} samples, 5 label metrics; {repeat} interleaved run(s) per tool, medians", flush=True)
    got: dict[str, list[tuple[float, float, float, float]]] = {"report": [], "floor": []}
    page = pages = 0.0
    for r in range(repeat):
        for tool in (["report", "floor"] if r % 2 == 0 else ["floor", "report"]):
            load = load_average()
            if tool == "report":
                out = Path(tempfile.mkdtemp(prefix="ragmeter-report-bench-"))
                try:
                    html = out / "report.html"
                    seconds, peak, _, cpu = timed([sys.executable, "-m", "ragmeter", "report", str(run), "--html",
                                                   str(html)])
                    page, pages = size(html), size(out / "report.html.pages")
                finally:
                    shutil.rmtree(out, ignore_errors=True)
            else:
                seconds, peak, _, cpu = timed([sys.executable, str(Path(__file__).resolve()), "--worker", str(run)])
            got[tool].append((seconds, cpu, peak, load))
    floor = statistics.median(g[0] for g in got["floor"])
    floor_cpu = statistics.median(g[1] for g in got["floor"])
    print(f"page {page:.2f} MB, pages folder {pages:.0f} MB")
    print(f"{'':8} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'load':>5}   {'/ floor wall, cpu':>17}")
    for tool, rows in got.items():
        wall, cpu = statistics.median(g[0] for g in rows), statistics.median(g[1] for g in rows)
        peak, load = max(g[2] for g in rows), statistics.median(g[3] for g in rows)
        print(f"{tool:8} {wall:8.2f} {cpu:8.2f} {peak:8.0f} {load:5.1f}   {wall / floor:7.2f} {cpu / floor_cpu:8.2f}",
              flush=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", default="1000,50000,500000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    warm_bytecode()
    print(f"load average {load_average():.1f} at the start")
    for n in (int(x) for x in args.samples.split(",")):
        bench(n, min(args.repeat, 2) if n >= 500_000 else args.repeat)


if __name__ == "__main__":
    main()
