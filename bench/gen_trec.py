"""Generate a synthetic TREC qrels + run pair (the benchmark's input).

Default: 10,000 queries x 1,000 documents (10M run lines), about 5 relevant documents per
query (1 + Poisson(4), grades 1/2/3 with p = .6/.3/.1, about 75% retrieved, biased to the
top) plus 8 judged non-relevant ones, unique scores unless ``--ties`` rounds them.

    python bench/gen_trec.py --queries 10000 --docs 1000 --out bench/.data/10000x1000
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def generate(queries: int, docs: int, out: Path, seed: int = 0, ties: bool = False) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path = out / "qrels.txt", out / "run.txt"
    doc_space = 10_000_000  # MS MARCO-like: millions of distinct docnos across queries
    with open(qrels_path, "w") as qf, open(run_path, "w") as rf:
        for q in range(queries):
            qid = str(1000 + q)
            ranked = rng.choice(doc_space, size=docs, replace=False)
            n_rel = 1 + rng.poisson(4)
            grades = rng.choice([1, 2, 3], size=n_rel, p=[0.6, 0.3, 0.1])
            retrieved_rel = rng.random(n_rel) < 0.75
            positions = np.minimum((rng.exponential(docs / 8, size=n_rel)).astype(int), docs - 1)
            rel_docs = []
            extra = doc_space
            for g, hit, pos in zip(grades, retrieved_rel, positions):
                if hit:
                    rel_docs.append((int(ranked[pos]), int(g)))
                else:
                    rel_docs.append((extra, int(g)))
                    extra += 1
            seen = {d for d, _ in rel_docs}
            nonrel = [int(d) for d in rng.choice(ranked, size=8, replace=False) if int(d) not in seen]
            lines = {d: g for d, g in rel_docs}
            lines.update({d: 0 for d in nonrel})
            qf.write("".join(f"{qid} 0 d{d} {g}\n" for d, g in sorted(lines.items())))
            scores = np.sort(rng.random(docs))[::-1] * 10
            if ties:
                scores = np.round(scores, 2)
            rf.write("".join(f"{qid} Q0 d{d} {r} {s:.6f} bench\n"
                             for r, (d, s) in enumerate(zip(ranked, scores), start=1)))
    return qrels_path, run_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ties", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    out = a.out or Path(__file__).parent / ".data" / f"{a.queries}x{a.docs}{'_ties' if a.ties else ''}"
    print(*generate(a.queries, a.docs, out, a.seed, a.ties))


if __name__ == "__main__":
    main()
