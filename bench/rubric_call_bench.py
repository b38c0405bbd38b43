"""The rubric judged per criterion (``rubric``, the default) or all criteria in one call
(``rubric_joint``): which agrees better with people, and what each costs.

    python bench/rubric_call_bench.py --limit 12                          # the bundled local model
    python bench/rubric_call_bench.py --limit 12 --judge openai:MODEL --base-url http://127.0.0.1:8000/v1

Scores the MTRAG development half's responses (``mtrag_set.stratified``: the sample
``judge-check --set mtrag-dev --limit N`` draws), which people rated 1-4 for faithfulness and for
completeness, on two rubric criteria written for those two ratings, once per criterion and once
with both in one call, through a ledger under ``bench/.data/`` (a rerun asks nothing twice).
Prints, per criterion and per form: the responses scored, Spearman's rho against the median
human rating with its 95% interval (Fisher z, Bonett & Wright's standard error:
``ragmeter.analysis.correlate``), and the judge's calls and input tokens. The bundled local
judge does not serve rubric prompts in ragmeter (they have not been measured against people);
this script lifts that refusal for the measurement only. Prints the load average beside the time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / ".data"

CRITERIA = {
    "faithful": ("Is every statement of the answer grounded on the passages given as context (not on outside "
                 "knowledge)? 1: no, 2: mostly no, 3: mostly yes, 4: yes."),
    "complete": ("Does the answer give everything the passages hold that the question asks for? 1: no, "
                 "2: mostly no, 3: mostly yes, 4: yes."),
}
RATING = {"faithful": "faithfulness", "complete": "completeness"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=12, help="responses (stratified by human faithfulness)")
    ap.add_argument("--judge", default="local", help="local (the bundled model) or openai:MODEL")
    ap.add_argument("--base-url", default=None)
    args = ap.parse_args()

    import ragmeter
    from ragmeter.analysis.correlate import rho_interval, spearman
    from ragmeter.evidence.rubric_criteria import Criterion
    from ragmeter.judges import Judge
    from ragmeter.ledger import Ledger
    from ragmeter.trust import mtrag_set

    items = mtrag_set.stratified(mtrag_set.load_set(), args.limit)
    criteria = {name: Criterion(name, text, 1, 4) for name, text in CRITERIA.items()}
    DATA.mkdir(parents=True, exist_ok=True)
    ledger = Ledger(DATA / "rubric_call_ledger.sqlite")
    if args.judge == "local":
        from ragmeter.judges.local import LocalBackend

        class Measuring(LocalBackend):
            def refuses(self, prompt_id: str) -> str | None:  # measured here, not served by ragmeter
                return None

        backend = Measuring()
    else:
        from ragmeter.judges import OpenAIBackend

        backend = OpenAIBackend(args.judge.split(":", 1)[1], base_url=args.base_url, api_key="none")
    samples = [i.sample() for i in items]
    for form in ("rubric", "rubric_joint"):
        judge = Judge(backend, ledger=ledger)
        names = [f"{form}(criterion='{c}', scale='raw')" for c in CRITERIA]
        t0 = time.perf_counter()
        result = ragmeter.evaluate(samples, names, judge=judge, criteria=criteria)
        took, load = time.perf_counter() - t0, Path("/proc/loadavg").read_text().split()[0]
        stats = result.judge_stats or {}
        print(f"{form}: {stats.get('calls')} calls ({stats.get('cached')} from the ledger), "
              f"{stats.get('input_tokens')} input tokens, {took:.0f} s at load {load}")
        for c, name in zip(CRITERIA, names):
            got = {i.id: o.value for i, o in zip(items, result[name]) if o.status == "scored"}
            human = [i.human(RATING[c]) for i in items if i.id in got]
            rho = spearman(list(got.values()), human)
            ci = rho_interval(rho, len(got))
            shown = "n/a" if rho is None else f"{rho:+.3f}" + (f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "")
            print(f"  {c}: {len(got)} of {len(items)} scored; Spearman vs human {RATING[c]}: {shown}; "
                  f"scores {sorted(got.values())}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
