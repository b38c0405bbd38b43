"""The local judge's faithfulness family on the MTRAG development half, with every claim and
verdict probability kept, so that a verdict rule or a verification question can be compared on
the very same claims without extracting them again.

    python bench/mtrag_faith_bench.py run --limit 24      # extract + verify (model), then report
    python bench/mtrag_faith_bench.py report --limit 24   # the stored rows, re-decided (no model)

``run`` scores ``faithfulness``, ``faithfulness(unsupported='pass')`` and ``contradiction_rate``
on ``mtrag_set.stratified(items, N)`` (the sample ``judge-check --set mtrag-dev --limit N``
draws) through a ledger kept under ``bench/.data/`` (a rerun costs no model call), and writes
each response's claims and (claim, passage) probability rows to
``bench/.data/mtrag_faith_<N>.jsonl``. ``report`` re-decides them with the shipped rule and
prints ``mtrag_check``'s table (Spearman / Kendall against the median human faithfulness rating,
bootstrap intervals over tasks, Bert-KPrec and RougeL on the same items), and the claims called
contradicted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / ".data"
METRICS = ("faithfulness", "faithfulness(unsupported='pass')", "contradiction_rate")


def _records(limit: int) -> Path:
    return DATA / f"mtrag_faith_{limit}.jsonl"


def run(limit: int) -> None:
    from ragmeter.engine.evaluate import evaluate
    from ragmeter.judges import Judge
    from ragmeter.judges.local.backend import VERIFY, LocalBackend
    from ragmeter.ledger import Ledger
    from ragmeter.trust import mtrag_set

    log: list[dict] = []

    class Recording(LocalBackend):
        def _complete(self, messages, schema, decoding, request):  # type: ignore[no-untyped-def]
            reply = super()._complete(messages, schema, decoding, request)
            if request is not None and request.prompt.id == VERIFY and request.parts is not None:
                log.append({"passages": [pid for pid, _ in request.parts["passages"]],
                            "claims": [list(c) for c in request.parts["claims"]], "rows": reply.logprobs})
            return reply

    items = mtrag_set.stratified(mtrag_set.load_set(), limit)
    DATA.mkdir(parents=True, exist_ok=True)
    judge = Judge(Recording(), ledger=Ledger(DATA / "mtrag_faith_ledger.sqlite"))
    t0 = time.perf_counter()
    result = evaluate([i.sample() for i in items], list(METRICS), judge=judge)
    print(f"{len(items)} responses in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    out = []
    for item, ev in zip(items, result.evidence):
        pids = [pid for pid, _ in item.passages]
        claims = [c.text for c in ev.answer_claims] if isinstance(ev.answer_claims, tuple) else []
        verify = next((v for v in log if v["passages"] == pids and claims == [t for _, t in v["claims"]]), None)
        outcomes = {m: result.outcome(m, item.id) for m in METRICS}
        out.append({"id": item.id, "task": item.task, "human": item.human("faithfulness"), "claims": claims,
                    "verify": verify, "scores": {m: getattr(o, "value", None) for m, o in outcomes.items()},
                    "why": str(getattr(outcomes["faithfulness"], "reason", "") or "")})
    _records(limit).write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")


def decide_all(records: list[dict], rule: Any) -> dict[str, dict[str, object]]:
    """Each metric's outcome per response, from the stored rows and ``rule``."""
    outcomes: dict[str, dict[str, object]] = {m: {} for m in METRICS}
    outcomes["factual_correctness(mode='recall')"] = {}
    for r in records:
        if not r["claims"] or r["verify"] is None:
            for m in METRICS:
                outcomes[m][r["id"]] = SimpleNamespace(value=None, reason=r.get("why") or "no claims")
            continue
        verdicts = [rule.decide([row for row in r["verify"]["rows"] if row["claim"] == cid])[0]
                    for cid, _ in r["verify"]["claims"]]
        n = len(verdicts)
        outcomes["faithfulness"][r["id"]] = SimpleNamespace(value=verdicts.count("supported") / n)
        outcomes["faithfulness(unsupported='pass')"][r["id"]] = SimpleNamespace(
            value=1 - verdicts.count("contradicted") / n)
        outcomes["contradiction_rate"][r["id"]] = SimpleNamespace(value=verdicts.count("contradicted") / n)
    return outcomes


def report(limit: int, show: bool = True) -> None:
    from ragmeter.analysis import mtrag_check
    from ragmeter.judges.local import agreement as local_agreement
    from ragmeter.trust import mtrag_set

    records = [json.loads(x) for x in _records(limit).read_text(encoding="utf-8").splitlines()]
    items = {i.id: i for i in mtrag_set.stratified(mtrag_set.load_set(), limit)}
    rule = local_agreement.rule_for(local_agreement.DEFAULT_SETTINGS)
    outcomes = decide_all(records, rule)
    rows = mtrag_check.report([items[r["id"]] for r in records], outcomes)
    for line in mtrag_check.lines([r for r in rows if r.check.rating == "faithfulness"]):
        print(line)
    if show:
        for r in records:
            if r["verify"] is None:
                continue
            for cid, text in r["verify"]["claims"]:
                got = [row for row in r["verify"]["rows"] if row["claim"] == cid]
                verdict = rule.decide(got)[0]
                if verdict == "contradicted":
                    probs = [(x["passage"][:12], x["supported"], x["contradicted"], x["unmentioned"])
                             for x in got if "supported" in x]
                    print(f"  human {r['human']}: {text!r} -> {verdict} {probs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("run", "report"))
    parser.add_argument("--limit", type=int, default=24)
    args = parser.parse_args()
    if args.what == "run":
        run(args.limit)
    report(args.limit)


if __name__ == "__main__":
    main()
