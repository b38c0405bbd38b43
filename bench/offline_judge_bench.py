"""The offline judge's rule: its evidence rows on the two sets we have, the fit, and its figures.

    python bench/offline_judge_bench.py rows          # signal rows of both sets -> bench/.data/offline/
    python bench/offline_judge_bench.py fit [--write] # grid search + cross-validation; --write: rule.json
    python bench/offline_judge_bench.py speed [--repeat 5]  # faithfulness + context recall on q1, load printed

rows: every (claim, passage) row of ``judges/offline/signals.py`` for the bundled agreement set
(216 hand-labeled claims, 24 contexts) and for the MTRAG development half (the 216 responses
shown passages: each response's sentences against its passages, and the reference's sentences
against each model response for completeness), computed once and cached (they are what the
ledger stores: a new rule costs no embedding or model time).

fit: the rule's constants (``judges/offline/rule.py``). The support model's weights on the MTRAG
half alone: a pairwise logistic loss over the responses people rated apart, so that the higher
rated gets the higher faithfulness (sum_c n_c p_c / sum_c n_c, as the metric reads the judge's
support), with a ridge. Then the thresholds, ``t_sure`` and the switches by grid search on both
sets, maximising agreement-set accuracy (minus one per contradicted claim called supported) plus
the MTRAG Spearman of faithfulness against the median human rating, and that of
-contradiction_rate where it is negative (a contradicted verdict must not go to faithful
answers). The figures beside them are cross-validated: each agreement context judged by
thresholds fitted without it, each MTRAG conversation's responses by weights and thresholds
fitted without that conversation (all its tasks), and the tune split -> heldout split figure.
``--write`` puts the constants and figures into
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
GRID = tuple(round(x, 3) for x in np.arange(0.05, 0.951, 0.05))  # thresholds on the support probability


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
T_SURES = (0.8, 0.85, 0.9, 0.95)  # full credit at or above: chosen by the fit among these
L2, SHARPNESS = 0.03, 5.0  # the weight fit's ridge and pairwise-loss slope (on standardised signals)


class Rows:
    """Every (claim, passage) row of a set as arrays: the signals the support model reads, the
    claim each belongs to, its conflicts (with and without negation), whether it is complete."""

    def __init__(self, claims: list[list[dict]]) -> None:
        from ragmeter.judges.offline.rule import SIGNALS, complete, conflict

        flat = [r for rows in claims for r in rows]
        self.n = len(claims)
        self.x = np.array([[float(r[s]) for s in SIGNALS] for r in flat]).reshape(len(flat), len(SIGNALS))
        self.claim = np.array([i for i, rows in enumerate(claims) for _ in rows], dtype=int)
        self.conflict = {n: np.array([conflict(r, negation=n) for r in flat], dtype=bool) for n in (False, True)}
        self.complete = np.array([complete(r) for r in flat], dtype=bool)

    def z(self, w: np.ndarray, b: float) -> np.ndarray:
        """Per claim: the best row's logit."""
        out = np.full(self.n, -np.inf)
        np.maximum.at(out, self.claim, self.x @ w + b)
        return out

    def decided(self, w: np.ndarray, b: float) -> tuple[np.ndarray, np.ndarray]:
        """Per claim: its support p and the index of its deciding row (the first best)."""
        zr = self.x @ w + b
        order = np.lexsort((np.arange(len(zr)), -zr, self.claim))  # by claim, best first, first on a tie
        first = order[np.r_[True, self.claim[order][1:] != self.claim[order][:-1]]]
        return 1 / (1 + np.exp(-zr[first])), first

    def predict(self, w: np.ndarray, b: float, params: tuple, idx: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        """(verdict index per claim, support p per claim) under thresholds ``params``."""
        t_found, t_supported, _, (need_complete, negation) = params
        p, row = self.decided(w, b)
        c, ok = self.conflict[negation][row], self.complete[row] if need_complete else np.ones(self.n, dtype=bool)
        out = np.full(self.n, 2)
        found = p >= t_found
        out[found & c] = 1
        out[found & ~c & (p >= t_supported) & ok] = 0
        sl = slice(None) if idx is None else idx
        return out[sl], p[sl]


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import spearmanr

    v = spearmanr(x, y).statistic
    return float(v) if np.isfinite(v) else -1.0


def load() -> tuple[dict, dict]:
    from ragmeter.metrics.generation.faithfulness import claim_weight

    agree = [json.loads(x) for x in (DATA / "agreement_rows.jsonl").read_text().splitlines()]
    mtrag = [json.loads(x) for x in (DATA / "mtrag_rows.jsonl").read_text().splitlines()]
    a_claims = [rows for case in agree for rows in per_claim(case["rows"])]
    a = {"rows": Rows(a_claims), "labels": np.array([LABELS.index(x) for case in agree for x in case["labels"]]),
         "groups": np.array([case["id"] for case in agree for _ in case["labels"]]),
         "split": np.array([case["split"] for case in agree for _ in case["labels"]])}
    m_claims, owner, weight = [], [], []
    for k, r in enumerate(mtrag):
        text = dict((cid, t) for cid, t in r["claims"])
        for rows in per_claim(r["rows"]):
            m_claims.append(rows)
            owner.append(k)
            weight.append(claim_weight(text[rows[0]["claim"]]))
    m = {"rows": Rows(m_claims), "owner": np.array(owner), "weight": np.array(weight, dtype=float),
         "human": np.array([r["human"] for r in mtrag]),
         "conversation": np.array([r["task"].split("<::>")[0] for r in mtrag]), "items": mtrag}
    return a, m


def per_response(m: dict, credit: np.ndarray, responses: np.ndarray) -> np.ndarray:
    """Per response: sum_c n_c credit_c / sum_c n_c (n_c: the claim's content tokens; as the
    faithfulness metric reads the offline judge's support), 0 for a response with no claims."""
    n = np.bincount(m["owner"], weights=m["weight"], minlength=len(m["items"]))
    s = np.bincount(m["owner"], weights=m["weight"] * credit, minlength=len(m["items"]))
    return np.divide(s, n, out=np.zeros(len(n)), where=n > 0)[responses]


def rate(m: dict, pred: np.ndarray, responses: np.ndarray, verdict: int = 1) -> np.ndarray:
    """Per response: claims with ``verdict`` / claims (contradiction_rate for 1)."""
    n = np.bincount(m["owner"], minlength=len(m["items"]))
    s = np.bincount(m["owner"], weights=pred == verdict, minlength=len(m["items"]))
    return np.divide(s, n, out=np.zeros(len(n)), where=n > 0)[responses]


def credit(pred: np.ndarray, p: np.ndarray, t_sure: float) -> np.ndarray:
    """``EvidenceRule.credit``: 0 contradicted, 1 supported at or above t_sure, else p."""
    return np.where(pred == 1, 0.0, np.where((pred == 0) & (p >= t_sure), 1.0, p))


def fit_weights(m: dict, responses: np.ndarray) -> tuple[np.ndarray, float]:
    """The support model's weights and bias: on standardised signals, minimising a pairwise
    logistic loss over the responses people rated apart (the higher-rated response should get
    the higher faithfulness, sum_c n_c p_c / sum_c n_c) plus a ridge; returned on the raw scale."""
    from scipy.optimize import minimize

    rows, d = m["rows"], m["rows"].x.shape[1]
    mu, sd = rows.x.mean(0), rows.x.std(0) + 1e-9
    z_x = (rows.x - mu) / sd
    h = m["human"][responses]
    pairs = (h[:, None] > h[None, :]).astype(float)
    keep = np.isin(m["owner"], responses)

    def loss(v: np.ndarray) -> float:
        zr = z_x @ v[:d] + v[d]
        best = np.full(rows.n, -np.inf)
        np.maximum.at(best, rows.claim, zr)
        f = per_response(m, keep / (1 + np.exp(-best)), responses)
        return float((pairs * np.logaddexp(0, -SHARPNESS * (f[:, None] - f[None, :]))).sum() / pairs.sum()
                     + L2 * (v[:d] ** 2).sum())

    v = minimize(loss, np.r_[np.full(d, 0.5), 0.0], method="L-BFGS-B").x
    return v[:d] / sd, float(v[d] - (v[:d] * mu / sd).sum())


def objective(a: dict, m: dict, wb: tuple, params: tuple, a_idx: np.ndarray, m_resp: np.ndarray) -> float:
    pa, _ = a["rows"].predict(*wb, params, a_idx)
    y = a["labels"][a_idx]
    acc = ((pa == y).sum() - ((y == 1) & (pa == 0)).sum()) / max(1, len(y))
    if len(m_resp) < 3:
        return acc
    pm, p = m["rows"].predict(*wb, params)
    rho = spearman(per_response(m, credit(pm, p, params[2]), m_resp), m["human"][m_resp])
    contradicted = rate(m, pm, m_resp)
    # -contradiction_rate must not rank unfaithful answers higher: a negative Spearman counts against
    # (a constraint, not a goal: the few contradictions make a positive one noise)
    rho_c = spearman(-contradicted, m["human"][m_resp]) if contradicted.any() else 0.0
    return acc + rho + min(0.0, rho_c)


def fit(a: dict, m: dict, wb: tuple, a_idx: np.ndarray, m_resp: np.ndarray) -> tuple:
    """The thresholds and switches maximising the objective for support weights ``wb``; ties go
    to the first found (the simpler switches, the lower thresholds)."""
    best, key = None, -math.inf
    for switches in SWITCHES:
        for tf in GRID:
            for ts in (t for t in GRID if t >= tf):
                for sure in (t for t in T_SURES if t >= ts):
                    v = objective(a, m, wb, (tf, ts, sure, switches), a_idx, m_resp)
                    if v > key + 1e-12:
                        best, key = (tf, ts, sure, switches), v
    assert best is not None
    return best


def cross_validated(a: dict, m: dict, wb: tuple) -> dict:
    all_a, all_m = np.arange(len(a["labels"])), np.arange(len(m["items"]))
    # agreement set: leave one context out (weights from MTRAG alone; its thresholds fitted without the context)
    pred = np.full(len(all_a), -1)
    for g in dict.fromkeys(a["groups"].tolist()):
        held = a["groups"] == g
        pred[held] = a["rows"].predict(*wb, fit(a, m, wb, all_a[~held], all_m), all_a[held])[0]
    y = a["labels"]
    agree_cv = {"accuracy": round(float((pred == y).mean()), 4), "n": int(len(y)),
                "contradicted_called_supported": int(((y == 1) & (pred == 0)).sum()),
                "of_contradicted": int((y == 1).sum()),
                "confusion": {LABELS[i]: [int(((y == i) & (pred == j)).sum()) for j in range(3)] for i in range(3)}}
    # MTRAG: leave one conversation out (weights and thresholds fitted without it; agreement set whole)
    faith, contra = np.zeros(len(all_m)), np.zeros(len(all_m))
    for conv in dict.fromkeys(m["conversation"].tolist()):
        held = m["conversation"] == conv
        wb_c = fit_weights(m, all_m[~held])
        params = fit(a, m, wb_c, all_a, all_m[~held])
        pm, p = m["rows"].predict(*wb_c, params)
        faith[held] = per_response(m, credit(pm, p, params[2]), all_m[held])
        contra[held] = rate(m, pm, all_m[held])
    mtrag_cv = {"spearman": round(spearman(faith, m["human"]), 4),
                "minus_contradiction_rate_spearman": round(spearman(-contra, m["human"]), 4), "n": int(len(all_m)),
                "conversations": len(set(m["conversation"].tolist()))}
    # tune -> heldout
    tune = all_a[a["split"] == "tune"]
    held = all_a[a["split"] == "heldout"]
    ph, yh = a["rows"].predict(*wb, fit(a, m, wb, tune, all_m), held)[0], a["labels"][held]
    split = {"accuracy": round(float((ph == yh).mean()), 4), "n": int(len(yh)),
             "contradicted_called_supported": int(((yh == 1) & (ph == 0)).sum()),
             "of_contradicted": int((yh == 1).sum())}
    return {"agreement_leave_one_context_out": agree_cv, "mtrag_leave_one_conversation_out": mtrag_cv,
            "agreement_tune_to_heldout": split}


def fit_all(write: bool) -> None:
    from ragmeter.judges.offline.rule import SIGNALS

    a, m = load()
    all_a, all_m = np.arange(len(a["labels"])), np.arange(len(m["items"]))
    wb = fit_weights(m, all_m)
    params = fit(a, m, wb, all_a, all_m)
    tf, ts, sure, (need_complete, negation) = params
    pa, _ = a["rows"].predict(*wb, params)
    pm, p = m["rows"].predict(*wb, params)
    weights = {f"w_{s}": round(float(w), 4) for s, w in zip(SIGNALS, wb[0])}
    fitted = {**weights, "bias": round(wb[1], 4), "t_found": tf, "t_supported": ts, "t_sure": sure,
              "require_complete": need_complete, "negation": negation,
              "agreement_in_sample": round(float((pa == a["labels"]).mean()), 4),
              "mtrag_in_sample_spearman": round(spearman(per_response(m, credit(pm, p, sure), all_m), m["human"]), 4)}
    print(json.dumps(fitted))
    cv = cross_validated(a, m, wb)
    print(json.dumps(cv, indent=1))
    if write:
        data = json.loads(RULE.read_text())
        data["version"] = 2
        data["constants"] = {**weights, "bias": round(wb[1], 4), "t_found": tf, "t_supported": ts, "t_sure": sure,
                             "m_supported": data["constants"].get("m_supported", 0.0),
                             "m_contradicted": data["constants"].get("m_contradicted", 0.0),
                             "require_complete": need_complete, "negation": negation,
                             "model_stage": data["constants"].get("model_stage", False)}
        data["fitted_on"] = (
            "support weights: the MTRAG development half (216 rated responses shown passages, 10 conversations), "
            f"pairwise logistic loss (slope {SHARPNESS}, ridge {L2}) on the standardised signals, so that a response "
            "people rated higher gets the higher faithfulness (sum_c n_c p_c / sum_c n_c); thresholds and switches: "
            "grid search on the bundled agreement set (216 hand-labeled claims, 24 contexts) and the MTRAG half, "
            "maximising agreement accuracy (minus one per contradicted claim called supported) + the Spearman of "
            "faithfulness against the median human rating + that of -contradiction_rate where negative "
            "(bench/offline_judge_bench.py fit)")
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
        backend._claims.clear()
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
