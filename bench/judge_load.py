"""Load trial of the judge transport: many samples at high concurrency against a judge server
on 127.0.0.1 that stalls past the timeout, resets, half-answers, throttles, errs and sends HTML
(``tests/faulty_server.py``), then ``--retry-failed``; optionally with the server killed and
restarted mid-run. Prints, per phase, the failures by reason, the client's memory, the longest
time the server heard nothing, and the server's count of judgments answered good twice.

    python bench/judge_load.py [--samples 20000] [--concurrency 32] [--fault-rate 0.1]
                               [--timeout 2] [--stall 4] [--kill-at 60]

A benchmark, not a test: nothing here asserts (tests/judges/test_transport.py runs a short one).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.judge_load import summary, trial  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=20_000)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--fault-rate", type=float, default=0.1)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--stall", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kill-at", type=float, default=None,
                    help="kill -9 the server this many seconds after the first request")
    ap.add_argument("--down", type=float, default=5.0, help="seconds the killed server stays down")
    ap.add_argument("--limit", type=float, default=1800.0, help="seconds a phase may run before it is killed")
    a = ap.parse_args()
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"{a.samples} samples, concurrency {a.concurrency}, {a.fault_rate:.0%} faults, timeout {a.timeout:g} s, "
          f"stalls {a.stall:g} s" + (f", server killed at {a.kill_at:g} s for {a.down:g} s" if a.kill_at else "")
          + f"; load {' '.join(load)}")
    with tempfile.TemporaryDirectory() as tmp:
        t = trial(Path(tmp), samples=a.samples, concurrency=a.concurrency, fault_rate=a.fault_rate,
                  timeout=a.timeout, stall=a.stall, seed=a.seed, kill_at=a.kill_at, down_s=a.down, limit_s=a.limit)
        print(summary(t))
    with open("/proc/loadavg") as f:
        print(f"load after: {' '.join(f.read().split()[:3])}")


if __name__ == "__main__":
    main()
