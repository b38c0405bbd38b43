"""How the three-way rule's passage pooling changes verdicts on the bundled agreement set.

    python bench/pool_check.py

With the default settings (three-way short question, best passage plus number/name overlaps),
a claim checked against one passage gets the same verdict under ``pool='max'`` and
``pool='passage'`` (one row: nothing to pool). So the two differ only on the claims checked
against several passages; this scores those claims (their probabilities computed here, cached
in ``bench/.data/pool_check.jsonl``) under both poolings with the shipped constants (bias 0.7,
log-ratio threshold 0: no new fitting), and prints correct verdicts and the confusion of each.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".data" / "pool_check.jsonl"


def main() -> None:
    from ragmeter.embeddings.minilm import bundled
    from ragmeter.judges.local import llm as local_llm
    from ragmeter.judges.local.agreement import DEFAULT_RULE, DEFAULT_SETTINGS
    from ragmeter.judges.local.model import bundled_model
    from ragmeter.judges.local.preselect import preselect
    from ragmeter.judges.local.verdict_rule import LABELS
    from ragmeter.trust.agreement_set import load_set

    question = local_llm.QUESTION_SETS[DEFAULT_SETTINGS.questions][0]
    cached = {}
    if CACHE.exists():
        for line in CACHE.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            cached[(r["passage"], r["claim"])] = r
    embedder, llm, start = bundled(), None, time.perf_counter()
    todo = []
    for case in load_set("all"):
        selections = preselect(list(case.claims), [t for _, t in case.passages], top_k=DEFAULT_SETTINGS.top_k,
                               embedder=embedder)
        for claim, label, sel in zip(case.claims, case.labels, selections):
            if len(sel.keep) > 1:
                todo.append((case, claim, label, [case.passages[j] for j in sel.keep]))
    by_passage: dict[tuple[str, str], list[str]] = {}
    for _case, claim, _, passages in todo:
        for pid, text in passages:
            if (pid, claim) not in cached:
                by_passage.setdefault((pid, text), []).append(claim)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with open(CACHE, "a", encoding="utf-8") as f:
        for k, ((pid, text), claims) in enumerate(by_passage.items(), start=1):
            if llm is None:
                llm = local_llm.LocalLLM(bundled_model(), n_ctx=4096)
            for claim, p in zip(claims, llm.ask(question, text, claims)):
                row = {"passage": pid, "claim": claim, **{x: round(v, 6) for x, v in p.items()}}
                cached[(pid, claim)] = row
                f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"  passage {k}/{len(by_passage)}, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    out = {}
    for pool in ("max", "passage"):
        rule = replace(DEFAULT_RULE, pool=pool)
        confusion = {a: {b: 0 for b in LABELS} for a in LABELS}
        for _, claim, label, passages in todo:
            rows = [{**cached[(pid, claim)], "claim": 1} for pid, _ in passages]
            confusion[label][rule.decide(rows)[0]] += 1
        correct = sum(confusion[a][a] for a in LABELS)
        out[pool] = {"correct": correct, "n": len(todo), "confusion": confusion}
        print(f"pool={pool}: {correct}/{len(todo)} correct on the claims checked against 2+ passages; "
              f"confusion (rows: label) {confusion}")
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
