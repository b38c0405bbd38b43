"""From typed-verdict probabilities to one verdict per claim: the local judge's decision rule.

Two questions are asked per (claim, passage) (``verify``): a three-way one (P supported,
P contradicted, P unmentioned) and a yes/no one ("is the claim true according to the
context?"). Pooled over the passages checked, as the strongest evidence either way,
s = max P(supported), c = max P(contradicted), n = min P(unmentioned), y = max P(yes):

    not_found     if log n + b > max(log s, log c)   (every passage leaves the claim out)
    supported     else if y >= t_s
    contradicted  else if y < t_c
    not_found     otherwise (t_c <= y < t_s: too uncertain to call either way)

With ``score='log_ratio'`` (the default judge's rule: the three-way question alone) the
score is log s - log c, compared with t_s and t_c the same way. ``pool`` says how passages
combine: ``'max'`` (the shipped rules) pools the maxima above, then decides, so the strongest
P(contradicted) of *any* checked passage is weighed against the support of the one that states
the claim; ``'passage'`` (log-ratio rules only) lets each checked passage decide alone on its
own (s, c, n): the claim is supported when some passage supports it, contradicted when some
passage contradicts it and none supports it, else not found. With the shipped constants the
two differ on 2 of the 66 agreement-set claims checked against 2+ passages, at 41/66 correct
either way (``bench/pool_check.py``), so the default stays ``'max'``.

The uncertain band makes the errors conservative: a claim the model cannot place is *not
found*, never *supported*. A claim with no passage checked (every passage skipped by the
preselection) is not found. ``b``, ``t_s`` and ``t_c`` are fitted by grid search on the
bundled agreement set, maximising correct verdicts minus a penalty for every contradicted
claim called supported (``fit``); the accuracy reported is the leave-one-context-out
cross-validated one (``cross_validate``), where each context's verdicts come from a rule
fitted on the other contexts only. The yes/no question is skipped where its answer cannot
change the verdict (the claim is not found by the first test), so rows may lack ``yes``.
``sources`` are the passages with the winning probability: the model's strongest passage,
not a checked citation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

_EPS = 1e-9
LABELS = ("supported", "contradicted", "not_found")
CS_PENALTY = 1.0  # a contradicted claim called supported costs this much more than another error


@dataclass(frozen=True)
class VerdictRule:
    bias_unmentioned: float = 0.0
    yes_threshold: float = 0.5  # t_s: supported at or above
    contradicted_below: float | None = None  # t_c: contradicted below; None: t_s (no uncertain band)
    fitted_on: str = "not fitted"
    score: str = "yes"  # what t_s and t_c are compared with: "yes" (y) or "log_ratio" (log s - log c)
    pool: str = "max"  # "max": pooled over the passages, then decided; "passage": each passage decides (log_ratio)

    def __post_init__(self) -> None:
        if self.pool not in ("max", "passage") or (self.pool == "passage" and self.score != "log_ratio"):
            raise ValueError(f"pool must be 'max', or 'passage' with score='log_ratio', got {self.pool!r}")

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def t_c(self) -> float:
        return self.yes_threshold if self.contradicted_below is None else self.contradicted_below

    @property
    def uses_yes(self) -> bool:
        return self.score == "yes"

    def mentioned(self, rows: Sequence[dict]) -> bool:
        """The first test: does some passage mention the claim (so the yes/no question matters)?"""
        if not rows:
            return False
        s, c, n = pool_three_way(rows)
        return not math.log(n + _EPS) + self.bias_unmentioned > max(math.log(s + _EPS), math.log(c + _EPS))

    def decide(self, rows: Sequence[dict]) -> tuple[str, list[str]]:
        rows = [r for r in rows if "supported" in r]  # rows of skipped passages carry no probabilities
        if self.pool == "passage" and len(rows) > 1:
            alone = replace(self, pool="max")
            each = [(alone.decide([r])[0], r["passage"]) for r in rows]
            for verdict in ("supported", "contradicted"):
                if any(v == verdict for v, _ in each):
                    return verdict, [pid for v, pid in each if v == verdict]
            return "not_found", []
        if not self.mentioned(rows):
            return "not_found", []
        if self.score == "log_ratio":
            s, c, _ = pool_three_way(rows)
            ratio = math.log(s + _EPS) - math.log(c + _EPS)
            if ratio >= self.yes_threshold:
                return "supported", [r["passage"] for r in rows if r["supported"] == s]
            if ratio < self.t_c:
                return "contradicted", [r["passage"] for r in rows if r["contradicted"] == c]
            return "not_found", []
        asked = [r for r in rows if r.get("yes") is not None]
        if not asked:  # the yes/no question was skipped (the claim looked unmentioned when asked)
            return "not_found", []
        y = max(r["yes"] for r in asked)
        if y >= self.yes_threshold:
            return "supported", [r["passage"] for r in asked if r["yes"] == y]
        if y < self.t_c:
            c = max(r["contradicted"] for r in rows)
            return "contradicted", [r["passage"] for r in rows if r["contradicted"] == c]
        return "not_found", []

    def verdicts(self, probs: list[dict], claim_ids: list[int]) -> dict:
        """The claims.verify reply built from stored (claim, passage) probabilities."""
        out = []
        for cid in claim_ids:
            verdict, sources = self.decide([r for r in probs if r["claim"] == cid])
            out.append({"id": cid, "verdict": verdict, "sources": sources, "combined": False, "quote": ""})
        return {"verdicts": out}


def pool_three_way(rows: Sequence[dict]) -> tuple[float, float, float]:
    return (max(r["supported"] for r in rows), max(r["contradicted"] for r in rows),
            min(r["unmentioned"] for r in rows))


# ---- fitting and cross-validation (on stored probabilities: no model call) -------------------

@dataclass(frozen=True)
class Claims:
    """Pooled features of labeled claims: log s, log c, log n, y (-1 where no passage was checked,
    NaN where the yes/no question was skipped)."""

    features: np.ndarray  # shape (n, 4)
    labels: np.ndarray  # indices into LABELS
    groups: np.ndarray  # context of each claim
    rows: np.ndarray | None = None  # log s, log c, log n of each checked (claim, passage): shape (m, 3)
    row_claim: np.ndarray | None = None  # the claim (index) of each row

    @classmethod
    def from_rows(cls, per_claim: Iterable[tuple[str, str, Sequence[dict]]]) -> Claims:
        """``per_claim``: (context, label, probability rows of the passages checked)."""
        feats, labels, groups, each, owner = [], [], [], [], []
        for k, (group, label, rows) in enumerate(per_claim):
            rows = [r for r in rows if "supported" in r]
            for r in rows:
                each.append([math.log(r["supported"] + _EPS), math.log(r["contradicted"] + _EPS),
                             math.log(r["unmentioned"] + _EPS)])
                owner.append(k)
            if rows:
                s, c, n = pool_three_way(rows)
                ys = [r["yes"] for r in rows if r.get("yes") is not None]
                y = max(ys) if ys else math.nan  # yes/no skipped: not found under any rule
                feats.append([math.log(s + _EPS), math.log(c + _EPS), math.log(n + _EPS), y])
            else:
                feats.append([0.0, 0.0, 0.0, -1.0])
            labels.append(LABELS.index(label))
            groups.append(group)
        return cls(np.array(feats, dtype=float).reshape(-1, 4), np.array(labels, dtype=int), np.array(groups),
                   np.array(each, dtype=float).reshape(-1, 3), np.array(owner, dtype=int))

    def subset(self, mask: np.ndarray) -> Claims:
        if self.rows is None or self.row_claim is None:
            return Claims(self.features[mask], self.labels[mask], self.groups[mask])
        new_index = np.cumsum(mask) - 1
        kept = mask[self.row_claim]
        return Claims(self.features[mask], self.labels[mask], self.groups[mask], self.rows[kept],
                      new_index[self.row_claim[kept]])


def _not_found(f: np.ndarray, bias: float, score: str) -> np.ndarray:
    checked = f[:, 3] >= 0 if score == "yes" else f[:, 3] != -1
    return ~checked | (f[:, 2] + bias > np.maximum(f[:, 0], f[:, 1]))


def _score(f: np.ndarray, score: str) -> np.ndarray:
    return f[:, 3] if score == "yes" else f[:, 0] - f[:, 1]


def _predict_by_passage(claims: Claims, bias: float, ts: float, tc: float) -> np.ndarray:
    """``pool='passage'``, vectorised: each row decides, then supported > contradicted > not found."""
    if claims.rows is None or claims.row_claim is None:
        raise ValueError("pool='passage' needs the claims' rows (Claims.from_rows)")
    r, n = claims.rows, len(claims.labels)
    mentioned = ~(r[:, 2] + bias > np.maximum(r[:, 0], r[:, 1]))
    ratio = r[:, 0] - r[:, 1]
    supported = np.bincount(claims.row_claim, weights=mentioned & (ratio >= ts), minlength=n) > 0
    contradicted = np.bincount(claims.row_claim, weights=mentioned & (ratio < tc), minlength=n) > 0
    out = np.full(n, 2)
    out[contradicted] = 1
    out[supported] = 0
    return out


def predict(rule: VerdictRule, claims: Claims) -> np.ndarray:
    """The rule's verdicts (indices into LABELS), vectorised; equal to ``rule.decide`` per claim."""
    if rule.pool == "passage":
        return _predict_by_passage(claims, rule.bias_unmentioned, rule.yes_threshold, rule.t_c)
    f = claims.features
    nf = _not_found(f, rule.bias_unmentioned, rule.score)
    v = _score(f, rule.score)
    out = np.full(len(f), 2)
    out[~nf & (v >= rule.yes_threshold)] = 0
    out[~nf & (v < rule.t_c)] = 1
    return out


BIASES = tuple(round(b, 2) for b in np.arange(-2.0, 2.01, 0.1))
THRESHOLDS = tuple(round(t, 3) for t in np.arange(0.05, 0.951, 0.025))
LOG_RATIOS = tuple(round(t, 2) for t in np.arange(-4.0, 4.01, 0.25))
GRIDS = {"yes": THRESHOLDS, "log_ratio": LOG_RATIOS}


def fit(claims: Claims, *, score: str = "yes", band: bool = True, penalty: float = CS_PENALTY,
        fitted_on: str = "", pool: str = "max") -> VerdictRule:
    """Grid search: correct verdicts minus ``penalty`` per contradicted claim called supported.
    Ties go to the narrowest band, then the highest supported threshold (the conservative side),
    then the smallest bias."""
    f, labels = claims.features, claims.labels
    grid = GRIDS[score]
    v = _score(f, score)
    best: tuple | None = None
    for b in BIASES:
        nf = _not_found(f, b, score)
        for i, ts in enumerate(grid):
            for tc in (grid[: i + 1] if band else (ts,)):
                if pool == "passage":
                    pred = _predict_by_passage(claims, b, ts, tc)
                else:
                    pred = np.full(len(f), 2)
                    pred[~nf & (v >= ts)] = 0
                    pred[~nf & (v < tc)] = 1
                correct = int((pred == labels).sum())
                cs = int(((labels == 1) & (pred == 0)).sum())
                key = (correct - penalty * cs, -(ts - tc), ts, -b)
                if best is None or key > best[0]:
                    best = (key, b, ts, tc)
    assert best is not None
    _, b, ts, tc = best
    return VerdictRule(bias_unmentioned=float(b), yes_threshold=float(ts),
                       contradicted_below=None if tc == ts else float(tc), fitted_on=fitted_on, score=score, pool=pool)


@dataclass
class CrossValidation:
    """Leave-one-context-out: each context judged by a rule fitted on the others."""

    predicted: np.ndarray
    labels: np.ndarray
    groups: np.ndarray
    rules: dict

    @property
    def n(self) -> int:
        return len(self.labels)

    @property
    def correct(self) -> int:
        return int((self.predicted == self.labels).sum())

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0

    def confusion(self) -> dict[str, list[int]]:
        """rows: label; columns: judged supported, contradicted, not_found."""
        return {a: [int(((self.labels == i) & (self.predicted == j)).sum()) for j in range(3)]
                for i, a in enumerate(LABELS)}

    def rate(self, label: str, judged: str) -> float:
        i, j = LABELS.index(label), LABELS.index(judged)
        total = int((self.labels == i).sum())
        return int(((self.labels == i) & (self.predicted == j)).sum()) / total if total else 0.0

    def interval(self, *, draws: int = 2000, seed: int = 0) -> tuple[float, float]:
        return cluster_interval(self.predicted == self.labels, self.groups, draws=draws, seed=seed)

    def as_dict(self) -> dict:
        lo, hi = self.interval()
        return {"method": "leave-one-context-out cross-validation", "n": self.n, "contexts": len(set(self.groups)),
                "correct": self.correct, "accuracy": round(self.accuracy, 4),
                "interval95": [round(lo, 4), round(hi, 4)],
                "interval_method": "percentile bootstrap over contexts (2000 draws, seed 0)",
                "contradicted_called_supported": round(self.rate("contradicted", "supported"), 4),
                "confusion": self.confusion(), "labels": list(LABELS)}


def cross_validate(claims: Claims, *, score: str = "yes", band: bool = True, penalty: float = CS_PENALTY,
                   fit_on: Claims | None = None, pool: str = "max") -> CrossValidation:
    """Each context's claims judged by a rule fitted on the other contexts. ``fit_on``: the same
    claims as the rule is fitted (e.g. checked against every passage, while ``claims`` were
    checked against the preselected ones only)."""
    fit_on = claims if fit_on is None else fit_on
    if not (np.array_equal(fit_on.labels, claims.labels) and np.array_equal(fit_on.groups, claims.groups)):
        raise ValueError("fit_on must hold the same claims, in the same order")
    predicted = np.full(len(claims.labels), -1)
    rules = {}
    for group in dict.fromkeys(claims.groups.tolist()):
        held = claims.groups == group
        rule = fit(fit_on.subset(~held), score=score, band=band, penalty=penalty, pool=pool)
        rules[group] = rule
        predicted[held] = predict(rule, claims.subset(held))
    return CrossValidation(predicted, claims.labels, claims.groups, rules)


def cluster_interval(correct: np.ndarray, groups: np.ndarray, *, draws: int = 2000,
                     seed: int = 0) -> tuple[float, float]:
    """95% percentile bootstrap of a mean over resampled contexts (claims of one context move together)."""
    keys = list(dict.fromkeys(groups.tolist()))
    sums = np.array([correct[groups == k].sum() for k in keys], dtype=float)
    counts = np.array([(groups == k).sum() for k in keys], dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(keys), size=(draws, len(keys)))
    means = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


# ---- the shipped rule and its measured agreement ---------------------------------------------

_FIT = "grid search on the tune split of the bundled agreement set (36 claims, 6 domains)"
RULES = {
    "per_chunk": VerdictRule(bias_unmentioned=0.3, yes_threshold=0.40, fitted_on=_FIT),
    "joined": VerdictRule(bias_unmentioned=-0.1, yes_threshold=0.50, fitted_on=_FIT),
}

# Measured with the bundled model (ragmeter judge-check --judge local --split heldout [--mode joined]):
# accuracy on the held-out half, and its confusion (rows: label; columns: supported, contradicted,
# not_found). Per chunk is the default: the joined rule fitted to 0.81 on the tune half falls to 0.42.
MEASURED = {
    "per_chunk": {"split": "heldout", "n": 36, "accuracy": 0.75,
                  "confusion": {"supported": [9, 3, 0], "contradicted": [1, 10, 1], "not_found": [0, 4, 8]}},
    "joined": {"split": "heldout", "n": 36, "accuracy": 0.417,
               "confusion": {"supported": [2, 10, 0], "contradicted": [2, 9, 1], "not_found": [0, 8, 4]}},
}
