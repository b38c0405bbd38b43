"""The offline judge's rule: its evidence rows on the two sets we have, the fit, and its figures.

    python bench/offline_judge_bench.py rows          # signal rows of both sets -> bench/.data/offline/
    python bench/offline_judge_bench.py fit [--write] # grid search + cross-validation; --write: rule.json
    python bench/offline_judge_bench.py speed [--repeat 5]  # faithfulness + context recall on q1, load printed

rows: every (claim, passage) row of ``judges/offline/signals.py`` for the bundled agreement set
(216 hand-labeled claims, 24 contexts) and for the MTRAG development half (the 216 responses
shown passages: each response's sentences against its passages, and the reference's sentences
against each model response for completeness), computed once and cached (they are what the
ledger stores: a new rule costs no embedding or model time).

fit: the rule's constants (``judges/offline/rule.py``) by grid search on both sets at once,
maximising agreement-set accuracy (minus one per contradicted claim called supported) plus the
MTRAG Spearman against the median human rating of faithfulness and of -contradiction_rate (so
that a contradicted verdict is not given to faithful answers). The figures beside them are
cross-validated: each agreement context judged by constants fitted without it, each MTRAG
conversation's responses by constants fitted without that conversation (all its tasks), and
the tune split -> heldout split figure. ``--write`` puts the constants and figures into
``src/ragmeter/judges/offline/rule.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / ".data" / "offline"
RULE = ROOT / "src" / "ragmeter" / "judges" / "offline" / "rule.json"
LABELS = ("supported", "contradicted", "not_found")
WEIGHTS = ((1, 0, 0), (0, 1, 0), (0, 0, 1), (.5, .5, 0), (.5, 0, .5), (0, .5, .5), (1 / 3, 1 / 3, 1 / 3),
           (.25, .5, .25), (.5, .25, .25), (.25, .25, .5))
GRID = tuple(round(x, 3) for x in np.arange(0.30, 1.001, 0.05))


# ---- rows ---------------------------------------------------------------------------------------

def rows() -> None:
    from ragmeter.judges.offline.backend import OfflineBackend
    from ragmeter.trust.agreement_set import load_set as load_agreement
    from ragmeter.trust.mtrag_set import load_set as load_mtrag

    backend = OfflineBackend(model_stage=False)
    DATA.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with open(DATA / "agreement_rows.jsonl", "w", encoding="utf-8") as f:
        for case in load_agreement("all"):
            got = backend.rows(list(case.passages), list(enumerate(case.claims, start=1)))
            f.write(json.dumps({"id": case.id, "split": case.split, "claims": list(case.claims),
                                "labels": list(case.labels), "rows": got}) + "\n")
    print(f"agreement set: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    start = time.perf_counter()
    with open(DATA / "mtrag_rows.jsonl", "w", encoding="utf-8") as f:
        for item in load_mtrag():
            if not item.passages:
                continue
            ex = backend.extract({"question": item.question, "answer": item.response, "reference": item.reference})
            claims = [(c["id"], c["text"]) for c in ex["claims"]]
            refs = [(c["id"], c["text"]) for c in ex["reference_claims"]]
            f.write(json.dumps({
                "id": item.id, "task": item.task, "model": item.model, "human": item.human("faithfulness"),
                "completeness": item.human("completeness"), "declines": ex["declines"], "claims": claims,
                "rows": backend.rows(list(item.passages), claims) if claims else [],
                "ref_rows": backend.rows([("answer", item.response)], refs) if refs and item.model != "reference"
                else []}) + "\n")
    print(f"MTRAG: {time.perf_counter() - start:.0f} s", file=sys.stderr)


# ---- fit ----------------------------------------------------------------------------------------

def per_claim(rows: list[dict]) -> list[list[dict]]:
    out: dict[int, list[dict]] = {}
    for r in rows:
        out.setdefault(r["claim"], []).append(r)
    return list(out.values())


SWITCHES = tuple(itertools.product((False, True), (False, True)))  # (require_complete, negation)


class Table:
    """For every claim and weight option: align of the deciding passage, its conflicts (with and
    without negation), whether it is complete."""

    def __init__(self, claims: list[list[dict]]) -> None:
        from ragmeter.judges.offline.rule import complete, conflict

        shape = (len(WEIGHTS), len(claims))
        self.align = np.zeros(shape)
        self.conflict = {n: np.zeros(shape, dtype=bool) for n in (False, True)}
        self.complete = np.zeros(shape, dtype=bool)
        for w, (a, b, c) in enumerate(WEIGHTS):
            for i, rows in enumerate(claims):
                scores = [a * r["words"] + b * r["tokens"] + c * r["sentence"] for r in rows]
                k = int(np.argmax(scores))
                self.align[w, i], self.complete[w, i] = scores[k], complete(rows[k])
                for n in (False, True):
                    self.conflict[n][w, i] = conflict(rows[k], negation=n)

    def predict(self, params: tuple, idx: np.ndarray | None = None) -> np.ndarray:
        w, t_found, t_supported, (need_complete, negation) = params
        sl = slice(None) if idx is None else idx
        a, c = self.align[w, sl], self.conflict[negation][w, sl]
        ok = self.complete[w, sl] if need_complete else np.ones(len(a), dtype=bool)
        out = np.full(len(a), 2)
        found = a >= t_found
        out[found & c] = 1
        out[found & ~c & (a >= t_supported) & ok] = 0
        return out


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import spearmanr

    v = spearmanr(x, y).statistic
    return float(v) if np.isfinite(v) else -1.0


def load() -> tuple[dict, dict]:
    agree = [json.loads(x) for x in (DATA / "agreement_rows.jsonl").read_text().splitlines()]
    mtrag = [json.loads(x) for x in (DATA / "mtrag_rows.jsonl").read_text().splitlines()]
    a_claims = [rows for case in agree for rows in per_claim(case["rows"])]
    a = {"table": Table(a_claims), "labels": np.array([LABELS.index(x) for case in agree for x in case["labels"]]),
         "groups": np.array([case["id"] for case in agree for _ in case["labels"]]),
         "split": np.array([case["split"] for case in agree for _ in case["labels"]])}
    m_claims, owner = [], []
    for k, r in enumerate(mtrag):
        for rows in per_claim(r["rows"]):
            m_claims.append(rows)
            owner.append(k)
    m = {"table": Table(m_claims), "owner": np.array(owner), "human": np.array([r["human"] for r in mtrag]),
         "conversation": np.array([r["task"].split("<::>")[0] for r in mtrag]), "items": mtrag}
    return a, m


def faithfulness(m: dict, pred: np.ndarray, responses: np.ndarray, verdict: int = 0) -> np.ndarray:
    """Per response: supported claims / claims (``verdict=1``: contradicted claims / claims); 0 for
    a response with no claims (not computed in ragmeter; none here has no sentence)."""
    n = np.bincount(m["owner"], minlength=len(m["items"]))
    s = np.bincount(m["owner"], weights=pred == verdict, minlength=len(m["items"]))
    out = np.divide(s, n, out=np.zeros(len(n)), where=n > 0)
    return out[responses]


def objective(a: dict, m: dict, params: tuple, a_idx: np.ndarray, m_resp: np.ndarray) -> float:
    pa = a["table"].predict(params, a_idx)
    y = a["labels"][a_idx]
    acc = ((pa == y).sum() - ((y == 1) & (pa == 0)).sum()) / max(1, len(y))
    pm = m["table"].predict(params)
    if len(m_resp) < 3:
        return acc
    rho = spearman(faithfulness(m, pm, m_resp), m["human"][m_resp])
    contradicted = faithfulness(m, pm, m_resp, verdict=1)
    # -contradiction_rate must not rank unfaithful answers higher: its Spearman counts too (0 when constant)
    rho_c = spearman(-contradicted, m["human"][m_resp]) if contradicted.any() else 0.0
    return acc + rho + rho_c


def fit(a: dict, m: dict, a_idx: np.ndarray, m_resp: np.ndarray) -> tuple:
    """The constants maximising the objective; ties go to the first found (the simpler switches,
    the lower thresholds)."""
    best, key = None, -math.inf
    for switches in SWITCHES:
        for w in range(len(WEIGHTS)):
            for tf in GRID:
                for ts in (t for t in GRID if t >= tf):
                    v = objective(a, m, (w, tf, ts, switches), a_idx, m_resp)
                    if v > key + 1e-12:
                        best, key = (w, tf, ts, switches), v
    assert best is not None
    return best


def cross_validated(a: dict, m: dict) -> dict:
    all_a, all_m = np.arange(len(a["labels"])), np.arange(len(m["items"]))
    # agreement set: leave one context out (MTRAG whole in every fit)
    pred = np.full(len(all_a), -1)
    for g in dict.fromkeys(a["groups"].tolist()):
        held = a["groups"] == g
        pred[held] = a["table"].predict(fit(a, m, all_a[~held], all_m), all_a[held])
    y = a["labels"]
    agree_cv = {"accuracy": round(float((pred == y).mean()), 4), "n": int(len(y)),
                "contradicted_called_supported": int(((y == 1) & (pred == 0)).sum()),
                "of_contradicted": int((y == 1).sum()),
                "confusion": {LABELS[i]: [int(((y == i) & (pred == j)).sum()) for j in range(3)] for i in range(3)}}
    # MTRAG: leave one conversation out (agreement set whole in every fit)
    faith, contra = np.zeros(len(all_m)), np.zeros(len(all_m))
    for conv in dict.fromkeys(m["conversation"].tolist()):
        held = m["conversation"] == conv
        pm = m["table"].predict(fit(a, m, all_a, all_m[~held]))
        faith[held] = faithfulness(m, pm, all_m[held])
        contra[held] = faithfulness(m, pm, all_m[held], verdict=1)
    mtrag_cv = {"spearman": round(spearman(faith, m["human"]), 4),
                "minus_contradiction_rate_spearman": round(spearman(-contra, m["human"]), 4), "n": int(len(all_m)),
                "conversations": len(set(m["conversation"].tolist()))}
    # tune -> heldout
    tune = all_a[a["split"] == "tune"]
    held = all_a[a["split"] == "heldout"]
    ph, yh = a["table"].predict(fit(a, m, tune, all_m), held), a["labels"][held]
    split = {"accuracy": round(float((ph == yh).mean()), 4), "n": int(len(yh)),
             "contradicted_called_supported": int(((yh == 1) & (ph == 0)).sum()),
             "of_contradicted": int((yh == 1).sum())}
    return {"agreement_leave_one_context_out": agree_cv, "mtrag_leave_one_conversation_out": mtrag_cv,
            "agreement_tune_to_heldout": split}


def fit_all(write: bool) -> None:
    a, m = load()
    all_a, all_m = np.arange(len(a["labels"])), np.arange(len(m["items"]))
    params = fit(a, m, all_a, all_m)
    w, tf, ts, (need_complete, negation) = params
    pa = a["table"].predict(params)
    pm = m["table"].predict(params)
    fitted = {"weights": WEIGHTS[w], "t_found": tf, "t_supported": ts, "require_complete": need_complete,
              "negation": negation,
              "agreement_in_sample": round(float((pa == a["labels"]).mean()), 4),
              "mtrag_in_sample_spearman": round(spearman(faithfulness(m, pm, all_m), m["human"]), 4)}
    print(json.dumps(fitted))
    cv = cross_validated(a, m)
    print(json.dumps(cv, indent=1))
    if write:
        data = json.loads(RULE.read_text())
        data["constants"].update({"w_words": WEIGHTS[w][0], "w_tokens": WEIGHTS[w][1], "w_sentence": WEIGHTS[w][2],
                                  "t_found": tf, "t_supported": ts, "require_complete": need_complete,
                                  "negation": negation})
        data["fitted_on"] = (
            "grid search on the bundled agreement set (216 hand-labeled claims, 24 contexts) and the MTRAG "
            "development half (216 rated responses shown passages, 10 conversations), maximising agreement "
            "accuracy (minus one per contradicted claim called supported) + the Spearman of faithfulness and of "
            "-contradiction_rate against the median human rating (bench/offline_judge_bench.py fit)")
        data["measured"] = {"in_sample": fitted, **cv}
        RULE.write_text(json.dumps(data, indent=1) + "\n")


# ---- speed --------------------------------------------------------------------------------------

def speed(repeat: int) -> None:
    """Faithfulness + context recall on the warranty sample (q1 is its one answered sample) with the
    default offline judge, a fresh ledger and fresh passage cache each round (every judgment
    computed), the embedder loaded once beforehand; the median and the load average seen."""
    import os

    import ragmeter
    from ragmeter.judges import Judge
    from ragmeter.judges.offline.backend import OfflineBackend
    from ragmeter.ledger import Ledger

    warranty = ROOT / "examples" / "warranty"
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    backend = OfflineBackend()
    _ = backend.embedder
    seconds, cpu, loads = [], [], []
    for _round in range(repeat):
        backend._passages.clear()
        loads.append(os.getloadavg()[0])
        start, c0 = time.perf_counter(), time.process_time()
        judge = Judge(backend, ledger=Ledger(":memory:"))
        result = ragmeter.evaluate(data, ["faithfulness", "context_recall"], judge=judge)
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - c0)
        loads.append(os.getloadavg()[0])
    median = statistics.median(seconds)
    print(json.dumps({"judge": backend.model, "stages": backend.stages, "rounds": repeat,
                      "seconds": [round(x, 3) for x in seconds], "cpu_seconds": [round(x, 3) for x in cpu],
                      "median_s": round(median, 3), "answered_samples_per_s": round(1 / median, 2),
                      "load_average_1min": [round(min(loads), 2), round(max(loads), 2)],
                      "faithfulness": result.means().get("faithfulness"),
                      "context_recall": result.means().get("context_recall")}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("rows", "fit", "speed"))
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.what == "rows":
        rows()
    elif args.what == "speed":
        speed(args.repeat)
    else:
        fit_all(args.write)


if __name__ == "__main__":
    main()
