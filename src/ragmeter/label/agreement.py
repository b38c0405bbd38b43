"""Agreement between labelers on relevance grades, and where they disagree.

The unit is one (question, chunk) pair. Three coefficients, each undefined (``None``) when
chance agreement is already 1 (every label in one category) or nothing was labeled twice:

- Cohen's kappa (Cohen 1960), for two labelers (:func:`ragmeter.trust.judge_agreement.cohen_kappa`):
  ``kappa = (p_o - p_e) / (1 - p_e)``, ``p_o = sum_i n_ii / n``, ``p_e = sum_g n_g. n_.g / n^2``.
- Weighted kappa (Cohen 1968), for ordered grades:
  ``kappa_w = 1 - sum_ij w_ij o_ij / sum_ij w_ij e_ij`` with ``o_ij`` the observed share of pairs
  graded (i, j), ``e_ij = p_i. p_.j`` the share expected by chance, and disagreement weights
  ``w_ij = |i - j|`` (linear) or ``(i - j)^2`` (quadratic; Fleiss & Cohen 1973 show it equals
  an intraclass correlation). Grades are the positions 0..3 whichever grades occur (as
  scikit-learn's ``cohen_kappa_score(..., labels=[0, 1, 2, 3], weights=...)``).
- Fleiss' kappa (Fleiss 1971), for three or more labelers, over the pairs every one of them
  graded: with N pairs, m labelers and ``n_ig`` labelers giving pair i grade g,
  ``P_i = (sum_g n_ig^2 - m) / (m (m - 1))``, ``p_g = sum_i n_ig / (N m)``,
  ``kappa = (mean(P_i) - sum_g p_g^2) / (1 - sum_g p_g^2)`` (statsmodels' ``fleiss_kappa``).

Each is given on the grades and on the binary relevant / not relevant split at ``rel``
(grade >= rel), which is what the label metrics read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ragmeter.label.store import GRADES, LabelState
from ragmeter.label.tasks import Task
from ragmeter.trust.judge_agreement import cohen_kappa

CATEGORIES = len(GRADES)


def _table(a: Sequence[int], b: Sequence[int], categories: int) -> np.ndarray:
    t = np.zeros((categories, categories))
    for x, y in zip(a, b):
        t[x, y] += 1
    return t


def weighted_kappa(a: Sequence[int], b: Sequence[int], *, weights: str = "quadratic",
                   categories: int = CATEGORIES) -> float | None:
    """Cohen's weighted kappa with linear or quadratic disagreement weights."""
    if weights not in ("linear", "quadratic"):
        raise ValueError("weights must be 'linear' or 'quadratic'")
    if len(a) != len(b):
        raise ValueError("both labelers must grade the same items")
    n = len(a)
    if n == 0:
        return None
    o = _table(a, b, categories) / n
    e = np.outer(o.sum(axis=1), o.sum(axis=0))
    i, j = np.indices((categories, categories))
    w = np.abs(i - j) if weights == "linear" else (i - j) ** 2
    expected = float((w * e).sum())
    if expected == 0.0:
        return None
    return float(1 - (w * o).sum() / expected)


def fleiss_kappa(counts: np.ndarray) -> float | None:
    """Fleiss' kappa from an (items x categories) table of how many labelers chose each category;
    every row must sum to the same number of labelers m >= 2."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] == 0:
        return None
    m = counts.sum(axis=1)
    if not np.all(m == m[0]) or m[0] < 2:
        raise ValueError("every item needs the same number (>= 2) of labels")
    n_items, raters = counts.shape[0], m[0]
    p_i = ((counts**2).sum(axis=1) - raters) / (raters * (raters - 1))
    p_g = counts.sum(axis=0) / (n_items * raters)
    p_e = float((p_g**2).sum())
    if p_e >= 1.0:
        return None
    return float((p_i.mean() - p_e) / (1 - p_e))


@dataclass(frozen=True)
class PairAgreement:
    a: str
    b: str
    items: int
    exact: float | None  # share of items with the same grade
    kappa: float | None
    weighted_kappa: float | None  # quadratic
    binary_kappa: float | None

    def as_dict(self) -> dict:
        return {"labelers": [self.a, self.b], "items": self.items, "exact_agreement": self.exact,
                "cohen_kappa": self.kappa, "weighted_kappa_quadratic": self.weighted_kappa,
                "binary_kappa": self.binary_kappa}


def agreement_report(tasks: Sequence[Task], state: LabelState, *, rel: int = 1) -> dict:
    """Pairwise Cohen's kappas, Fleiss' kappa (three or more labelers) and the disagreements per question."""
    labelers = [w for w in state.labelers if state.grades.get(w)]
    pairs = []
    for a, b in combinations(labelers, 2):
        ga, gb = [], []
        for t in tasks:
            x, y = state.grades[a].get(t.id, {}), state.grades[b].get(t.id, {})
            for c in t.candidates:
                if c.id in x and c.id in y:
                    ga.append(x[c.id])
                    gb.append(y[c.id])
        ba, bb = [int(g >= rel) for g in ga], [int(g >= rel) for g in gb]
        pairs.append(PairAgreement(a, b, len(ga), (sum(x == y for x, y in zip(ga, gb)) / len(ga)) if ga else None,
                                   cohen_kappa(ga, gb), weighted_kappa(ga, gb), cohen_kappa(ba, bb)))
    fleiss = None
    if len(labelers) >= 3:
        rows, binary = [], []
        for t in tasks:
            for c in t.candidates:
                grades = [state.grades[w].get(t.id, {}).get(c.id) for w in labelers]
                if all(g is not None for g in grades):
                    rows.append(np.bincount(np.array(grades, dtype=int), minlength=CATEGORIES))
                    binary.append(np.bincount(np.array([int(g >= rel) for g in grades if g is not None]), minlength=2))
        fleiss = {"labelers": labelers, "items": len(rows),
                  "fleiss_kappa": fleiss_kappa(np.array(rows)) if rows else None,
                  "binary_fleiss_kappa": fleiss_kappa(np.array(binary)) if binary else None}
    return {"labelers": labelers, "rel": rel, "pairs": [p.as_dict() for p in pairs], "fleiss": fleiss,
            "disagreements": disagreements(tasks, state)}


def disagreements(tasks: Sequence[Task], state: LabelState) -> list[dict]:
    """Per question: the chunks that two or more labelers graded differently (with each grade and
    the adjudicated one, if any), and a split on "cannot be answered from these"."""
    out = []
    for t in tasks:
        items = []
        for c in t.candidates:
            grades = {w: g[t.id][c.id] for w, g in state.grades.items() if c.id in g.get(t.id, {})}
            if len(grades) >= 2 and len(set(grades.values())) > 1:
                final = state.finals.get(t.id, {}).get(c.id)
                items.append({"chunk": c.id, "grades": dict(sorted(grades.items())),
                              "final": None if final is None else {"grade": final[0], "by": final[1]}})
        flags = unanswerable_flags(t, state)
        split = len(set(flags.values())) > 1
        if items or split:
            out.append({"index": t.index, "sample": t.id, "question": t.question, "chunks": items,
                        "unanswerable": dict(sorted(flags.items())) if split else None,
                        "open": sum(1 for i in items if i["final"] is None)})
    return out


def unanswerable_flags(t: Task, state: LabelState, labelers: Sequence[str] | None = None) -> dict[str, bool]:
    """Each labeler who worked on the question: did they say it cannot be answered from the
    candidates? A labeler who graded chunks and never said so counts as no."""
    names = labelers if labelers is not None else state.labelers
    out = {}
    for w in names:
        flag = state.unanswerable.get(w, {}).get(t.id)
        if flag is not None or state.grades.get(w, {}).get(t.id):
            out[w] = bool(flag)
    return out
