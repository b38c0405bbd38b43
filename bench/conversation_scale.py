"""A long conversation through ``ragmeter eval``: the time, the peak memory and the run folder's
size, as the number of turns grows (each turn's history is stored once per conversation and
referenced: issue 38 measured 48.7 s and 3.3 GB for 4,000 turns, and a 1,000-turn conversation
writing a 202 MB samples.jsonl).

    python bench/conversation_scale.py [--turns 1000 2000 4000] [--metrics recall@5,ndcg@5]

A benchmark, not a test: nothing here asserts (tests/core/test_history.py checks the sizes).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def conversation(turns: int) -> dict:
    """About 520 bytes a turn (4,000 turns: 2 MB, the issue's file)."""
    return {"id": "c1", "turns": [
        {"question": f"Question number {i}: how long is the warranty of router model R{i % 7} in months? " + "x" * 120,
         "retrieved": [{"id": f"c{i % 50}", "text": "The router carries a limited hardware warranty."},
                       {"id": f"c{(i + 1) % 50}", "text": "Returns within 30 days."}],
         "relevant": [f"c{i % 50}"], "answer": f"The R{i % 7} warranty is 24 months. " + "y" * 100}
        for i in range(turns)]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, nargs="+", default=[1000, 2000, 4000])
    ap.add_argument("--metrics", default="recall@5,ndcg@5")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in a.turns:
            data = Path(tmp) / f"conv{n}.jsonl"
            data.write_text(json.dumps(conversation(n)) + "\n")
            runs = Path(tmp) / f"runs{n}"
            with open("/proc/loadavg") as f:
                load = " ".join(f.read().split()[:3])
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "ragmeter", "eval", str(data), "-m", a.metrics, "--runs-dir",
                            str(runs), "--format", "json"], check=True, stdout=subprocess.DEVNULL)
            wall = time.perf_counter() - start
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            size = sum(p.stat().st_size for p in runs.rglob("*") if p.is_file() and p.name != "ledger.sqlite")
            print(f"{n:6d} turns ({data.stat().st_size / 1e6:.2f} MB): {wall:.2f} s, peak RSS "
                  f"{max(peak, before) / 1024:.0f} MB (the largest child so far), run folder {size / 1e6:.2f} MB; "
                  f"load {load}")


if __name__ == "__main__":
    main()
