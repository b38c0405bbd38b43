"""The offline judge's rule: its evidence rows on the two sets we have, the fit, and its figures.

    python bench/offline_judge_bench.py rows          # signal rows of both sets -> bench/.data/offline/
    python bench/offline_judge_bench.py fit [--write] # grid search + cross-validation; --write: rule.json
    python bench/offline_judge_bench.py speed [--repeat 5] [--model-stage]  # faithfulness + context recall on q1
    python bench/offline_judge_bench.py model         # the bundled model's answers -> bench/.data/offline/

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


def model_answers() -> None:
    """The model stage's answers, computed once (a rerun resumes where the files end): the bundled
    model's three-way question (``MODEL_QUESTION``) for each claim against its deciding passage
    under the shipped rule, for every claim of the agreement set and for the MTRAG half's claims
    whose support lies in ``MODEL_BAND`` with no conflict (the claims a fitted t_found and t_ask
    can send to the model). Claims sharing a passage are asked together (the passage's prompt is
    read once). Rows gain ``model`` when :func:`load` reads them."""
    from ragmeter.judges.local import llm as local_llm
    from ragmeter.judges.offline.backend import MODEL_QUESTION, OfflineBackend, claim_text
    from ragmeter.judges.offline.rule import load_rule
    from ragmeter.trust.agreement_set import load_set as load_agreement
    from ragmeter.trust.mtrag_set import load_set as load_mtrag

    llm = OfflineBackend(model_stage=True).inner.llm
    question, rule = local_llm.QUESTION_SETS[MODEL_QUESTION][0], load_rule()
    # the passages by their owner: an agreement case, or an MTRAG task (its responses share them)
    for name, texts, band in (("agreement", {c.id: dict(c.passages) for c in load_agreement("all")}, (0.0, 1.1)),
                              ("mtrag", {i.task: dict(i.passages) for i in load_mtrag()}, MODEL_BAND)):
        wanted: dict[tuple[str, str], list[tuple[str, int, str]]] = {}  # (passage's owner, id) -> claims
        done_path = DATA / f"{name}_model.jsonl"
        done = {(d["id"], d["claim"]) for d in map(json.loads, done_path.read_text().splitlines())} \
            if done_path.exists() else set()
        for item in map(json.loads, (DATA / f"{name}_rows.jsonl").read_text().splitlines()):
            claim_texts = dict(item["claims"]) if name == "mtrag" else dict(enumerate(item["claims"], start=1))
            owner = item.get("task", item["id"])
            for rows in per_claim(item["rows"]):
                best = rule.deciding(rows)
                if (best is None or (item["id"], best["claim"]) in done or rule.conflict(best)
                        or not band[0] <= rule.support(best) < band[1]):
                    continue
                wanted.setdefault((owner, best["passage"]), []).append(
                    (item["id"], best["claim"], claim_text(claim_texts[best["claim"]])))
        start = time.perf_counter()
        with open(done_path, "a", encoding="utf-8") as f:
            for n, ((owner, pid), asked) in enumerate(wanted.items(), start=1):
                probs = llm.ask(question, texts[owner][pid], [t for _, _, t in asked])
                for (iid, cid, _), p in zip(asked, probs):
                    f.write(json.dumps({"id": iid, "claim": cid, "passage": pid, "model": _rounded(p)}) + "\n")
                f.flush()
                print(f"{name} {n}/{len(wanted)} {time.perf_counter() - start:.0f} s", file=sys.stderr)


MODEL_BAND = (0.2, 0.95)  # the MTRAG claims asked: support in this band (the fit's t_found and t_ask lie in it)


def _rounded(probs: dict) -> dict:
    return {k: round(v, 6) for k, v in probs.items()}


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
        # the model stage's log-ratio log P(supported) - log P(contradicted) where it was asked, else NaN
        self.ratio = np.array([math.log(r["model"]["supported"] + 1e-9) - math.log(r["model"]["contradicted"] + 1e-9)
                               if "model" in r else np.nan for r in flat])

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
        t_found, t_supported, t_sure, (need_complete, negation), *model = params
        p, row = self.decided(w, b)
        c, ok = self.conflict[negation][row], self.complete[row] if need_complete else np.ones(self.n, dtype=bool)
        out = np.full(self.n, 2)
        found = p >= t_found
        out[found & c] = 1
        out[found & ~c & (p >= t_supported) & ok] = 0
        if model and model[0] is not None:  # (m_supported, m_contradicted, decides, t_ask): rule.py's model stage
            m_s, m_c, decides, t_ask = model[0]
            ratio = self.ratio[row]
            asked = found & ~c & (p < t_ask) & ~np.isnan(ratio)
            out[asked & (ratio < m_c)] = 1
            out[asked & (ratio >= m_c) & (ratio < m_s)] = 2
            if decides:
                out[asked & (ratio >= m_s)] = 0
        sl = slice(None) if idx is None else idx
        return out[sl], p[sl]


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import spearmanr

    v = spearmanr(x, y).statistic
    return float(v) if np.isfinite(v) else -1.0


def load(with_model: bool = False) -> tuple[dict, dict]:
    from ragmeter.metrics.generation.faithfulness import claim_weight

    agree = [json.loads(x) for x in (DATA / "agreement_rows.jsonl").read_text().splitlines()]
    mtrag = [json.loads(x) for x in (DATA / "mtrag_rows.jsonl").read_text().splitlines()]
    if with_model:  # the model stage's stored answers join their rows
        for name, items in (("agreement_model.jsonl", agree), ("mtrag_model.jsonl", mtrag)):
            if not (DATA / name).exists():
                print(f"no {name}: those rows are decided on the evidence alone", file=sys.stderr)
                continue
            answers = {(d["id"], d["claim"], d["passage"]): d["model"]
                       for d in map(json.loads, (DATA / name).read_text().splitlines())}
            for item in items:
                for r in item["rows"]:
                    if (item["id"], r["claim"], r["passage"]) in answers:
                        r["model"] = answers[(item["id"], r["claim"], r["passage"])]
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


def fit(a: dict, m: dict, wb: tuple, a_idx: np.ndarray, m_resp: np.ndarray, model: bool = False) -> tuple:
    """The thresholds and switches maximising the objective for support weights ``wb``; ties go
    to the first found (the simpler switches, the lower thresholds). ``model``: then the model
    stage's constants (:func:`fit_model`) on top."""
    best, key = None, -math.inf
    for switches in SWITCHES:
        for tf in GRID:
            for ts in (t for t in GRID if t >= tf):
                for sure in (t for t in T_SURES if t >= ts):
                    v = objective(a, m, wb, (tf, ts, sure, switches), a_idx, m_resp)
                    if v > key + 1e-12:
                        best, key = (tf, ts, sure, switches), v
    assert best is not None
    return fit_model(a, m, wb, best, a_idx, m_resp) if model else best


M_GRID = tuple(round(x, 2) for x in np.arange(-3.0, 2.01, 0.25))  # the model's log-ratio thresholds


def fit_model(a: dict, m: dict, wb: tuple, params: tuple, a_idx: np.ndarray, m_resp: np.ndarray) -> tuple:
    """The model stage on top of the evidence's thresholds ``params`` (kept: the evidence alone
    decides as before where the stage does not run): t_ask (claims from t_found up to it are
    asked, within the band the stored answers cover), m_contradicted <= m_supported on the
    log-ratio, and whether the model decides the claims it is asked (else it only demotes); the
    evidence alone (no model stage) stays a candidate, so the stage is on only where it helps."""
    tf = params[0]
    best, key = (*params, None), objective(a, m, wb, params, a_idx, m_resp)
    if tf < MODEL_BAND[0]:
        return best
    for t_ask in (t for t in T_SURES if tf < t <= MODEL_BAND[1]):
        for decides in (False, True):
            for m_c in M_GRID:
                for m_s in (x for x in M_GRID if x >= m_c):
                    cand = (*params, (m_s, m_c, decides, t_ask))
                    v = objective(a, m, wb, cand, a_idx, m_resp)
                    if v > key + 1e-12:
                        best, key = cand, v
    return best


def cross_validated(a: dict, m: dict, wb: tuple, model: bool = False) -> dict:
    all_a, all_m = np.arange(len(a["labels"])), np.arange(len(m["items"]))
    # agreement set: leave one context out (weights from MTRAG alone; its thresholds fitted without the context)
    pred = np.full(len(all_a), -1)
    for g in dict.fromkeys(a["groups"].tolist()):
        held = a["groups"] == g
        pred[held] = a["rows"].predict(*wb, fit(a, m, wb, all_a[~held], all_m, model), all_a[held])[0]
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
        params = fit(a, m, wb_c, all_a, all_m[~held], model)
        pm, p = m["rows"].predict(*wb_c, params)
        faith[held] = per_response(m, credit(pm, p, params[2]), all_m[held])
        contra[held] = rate(m, pm, all_m[held])
    mtrag_cv = {"spearman": round(spearman(faith, m["human"]), 4),
                "minus_contradiction_rate_spearman": round(spearman(-contra, m["human"]), 4), "n": int(len(all_m)),
                "conversations": len(set(m["conversation"].tolist()))}
    # tune -> heldout
    tune = all_a[a["split"] == "tune"]
    held = all_a[a["split"] == "heldout"]
    ph, yh = a["rows"].predict(*wb, fit(a, m, wb, tune, all_m, model), held)[0], a["labels"][held]
    split = {"accuracy": round(float((ph == yh).mean()), 4), "n": int(len(yh)),
             "contradicted_called_supported": int(((yh == 1) & (ph == 0)).sum()),
             "of_contradicted": int((yh == 1).sum())}
    return {"agreement_leave_one_context_out": agree_cv, "mtrag_leave_one_conversation_out": mtrag_cv,
            "agreement_tune_to_heldout": split}


def fit_all(write: bool, model: bool = False) -> None:
    """The evidence's constants and figures; with ``model``, the model stage's on top of them
    and its own figures (``measured.model_stage``)."""
    from ragmeter.judges.offline.rule import SIGNALS

    a, m = load(model)
    all_a, all_m = np.arange(len(a["labels"])), np.arange(len(m["items"]))
    wb = fit_weights(m, all_m)
    params = fit(a, m, wb, all_a, all_m)
    tf, ts, sure, (need_complete, negation) = params
    weights = {f"w_{s}": round(float(w), 4) for s, w in zip(SIGNALS, wb[0])}

    def in_sample(chosen: tuple) -> dict:
        pa, _ = a["rows"].predict(*wb, chosen)
        pm, p = m["rows"].predict(*wb, chosen)
        return {"agreement_in_sample": round(float((pa == a["labels"]).mean()), 4),
                "mtrag_in_sample_spearman": round(spearman(per_response(m, credit(pm, p, sure), all_m), m["human"]), 4)}

    fitted = {**weights, "bias": round(wb[1], 4), "t_found": tf, "t_supported": ts, "t_sure": sure,
              "require_complete": need_complete, "negation": negation, **in_sample(params)}
    print(json.dumps(fitted))
    cv = cross_validated(a, m, wb)
    print(json.dumps(cv, indent=1))
    stage_constants: dict = {}
    if model:
        stage = fit_model(a, m, wb, params, all_a, all_m)[-1]
        if stage is not None:
            m_s, m_c, decides, t_ask = stage
            stage_constants = {"t_ask": t_ask, "m_supported": m_s, "m_contradicted": m_c, "model_decides": decides}
        stage_cv = {"in_sample": {**stage_constants, **in_sample((*params, stage))}, **cross_validated(a, m, wb, True)}
        print(json.dumps(stage_cv, indent=1))
    if write:
        data = json.loads(RULE.read_text())
        previous = data.get("constants", {})
        data["version"] = 2
        stage_or_before = {k: stage_constants.get(k, previous.get(k, default)) for k, default in
                           (("t_ask", sure), ("m_supported", 0.0), ("m_contradicted", 0.0), ("model_decides", False))}
        data["constants"] = {**weights, "bias": round(wb[1], 4), "t_found": tf, "t_supported": ts, "t_sure": sure,
                             **stage_or_before, "require_complete": need_complete, "negation": negation,
                             # on under plain --judge local only by hand: it costs the model's time (local:model)
                             "model_stage": previous.get("model_stage", False)}
        data["fitted_on"] = (
            "support weights: the MTRAG development half (216 rated responses shown passages, 10 conversations), "
            f"pairwise logistic loss (slope {SHARPNESS}, ridge {L2}) on the standardised signals, so that a response "
            "people rated higher gets the higher faithfulness (sum_c n_c p_c / sum_c n_c); thresholds and switches: "
            "grid search on the bundled agreement set (216 hand-labeled claims, 24 contexts) and the MTRAG half, "
            "maximising agreement accuracy (minus one per contradicted claim called supported) + the Spearman of "
            "faithfulness against the median human rating + that of -contradiction_rate where negative "
            "(bench/offline_judge_bench.py fit)"
            + ("; the model stage (t_ask, m_contradicted, m_supported, model_decides) by the same objective on "
               "the bundled model's stored answers for each claim's deciding passage (every agreement-set claim; "
               f"the MTRAG claims with support in [{MODEL_BAND[0]}, {MODEL_BAND[1]}); "
               "bench/offline_judge_bench.py model, then fit --model)" if model else ""))
        data["model_stage"] = ("off under plain --judge local (the model's time: about 20 s a passage on 2 cores); "
                               "--judge local:model turns it on; its figures: measured.model_stage")
        kept = {"model_stage": stage_cv} if model else (
            {"model_stage": data["measured"]["model_stage"]} if "model_stage" in data.get("measured", {}) else {})
        data["measured"] = {"in_sample": fitted, **cv, **kept}
        RULE.write_text(json.dumps(data, indent=1) + "\n")


# ---- speed --------------------------------------------------------------------------------------

def speed(repeat: int, model_stage: bool = False) -> None:
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
    backend = OfflineBackend(model_stage=True) if model_stage else OfflineBackend()
    _ = backend.embedder
    if backend.model_stage:
        _ = backend.inner.llm  # the model loaded beforehand, as the embedder
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
    parser.add_argument("what", choices=("rows", "fit", "speed", "model"))
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--model", action="store_true", help="fit: the model stage too (after `model`)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--model-stage", action="store_true", help="speed: with the model stage (--judge local:model)")
    args = parser.parse_args()
    if args.what == "rows":
        rows()
    elif args.what == "speed":
        speed(args.repeat, args.model_stage)
    elif args.what == "model":
        model_answers()
    else:
        fit_all(args.write, args.model)


if __name__ == "__main__":
    main()
