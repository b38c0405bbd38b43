"""Throughput of the offline local judge: faithfulness on the bundled warranty sample.

Times, in one process after the model is loaded: claim extraction plus verification of every
answered sample (fresh ledger, so every judgment is a model call), per_chunk (the default)
and joined mode, then a rerun from the ledger (no calls). Prints samples per second and
seconds per answered sample.

    python bench/local_judge_bench.py [--repeat 1]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import ragmeter
from ragmeter.judges import Judge
from ragmeter.judges.local import LocalBackend
from ragmeter.ledger import Ledger

ROOT = Path(__file__).resolve().parent.parent / "examples" / "warranty"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    data = ragmeter.load_dataset(ROOT / "dataset.jsonl", corpus=ROOT / "corpus.jsonl")
    answered = sum(bool(s.answer) for s in data.samples)
    start = time.perf_counter()
    backend = LocalBackend()
    backend.llm  # load now: loading is not part of the throughput
    print(f"model load: {time.perf_counter() - start:.1f} s ({backend.model})")
    for mode in ("per_chunk", "joined"):
        backend.set_mode(mode)
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                judge = Judge(backend, ledger=Ledger(Path(tmp) / "ledger.sqlite"))
                t0 = time.perf_counter()
                r = ragmeter.evaluate(data, ["faithfulness"], judge=judge)
                cold = time.perf_counter() - t0
                t0 = time.perf_counter()
                ragmeter.evaluate(data, ["faithfulness"], judge=Judge(backend, ledger=judge.ledger))
                warm = time.perf_counter() - t0
            print(f"{mode:9s}: {answered} answered of {len(data.samples)} samples, {cold:.1f} s "
                  f"-> {answered / cold:.3f} answered samples/s ({cold / answered:.1f} s each), "
                  f"{len(data.samples) / cold:.2f} samples/s; calls {judge.stats.calls}; "
                  f"faithfulness {r.means()['faithfulness']:.3f}; rerun from the ledger {warm:.2f} s")


if __name__ == "__main__":
    main()
