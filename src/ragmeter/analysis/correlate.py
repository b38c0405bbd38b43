"""Correlation between metrics across queries (Spearman), with the pairs a metric reference expects
to move together flagged where they diverge.

Spearman's rho = Pearson correlation of average ranks (Spearman 1904), over the queries
both metrics scored.

Expected pairs (the table of "You cannot improve what you cannot measure: the complete metric
reference for RAG systems"): faithfulness + answer relevancy > 0.7 (diverging: the
model understands but hallucinates); context recall + faithfulness > 0.7 (the context is
there but the answer is wrong); precision + nDCG > 0.8 (top-1 good, the rest noise);
context precision + hit rate > 0.5 (found something relevant, mostly noise).

A pair is flagged as diverging only when the data show it: the upper end of rho's 95% interval
is below the expected value (Fisher's z with Bonett & Wright's 2000 standard error for
Spearman's rho, sqrt((1 + rho^2 / 2) / (n - 3)); |rho| is capped at 0.999 before the
transform). Below 4 queries there is no interval and no flag. On 6 queries a rho of 0.41 has the
interval [-0.63, 0.92]: that reaches 0.8, so it is "too few queries to tell", not DIVERGES.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

import numpy as np

EXPECTED = [
    ("faithfulness", "answer_relevancy", 0.7, "the model understands the question but hallucinates"),
    ("context_recall", "faithfulness", 0.7, "the context is there but the answer is wrong"),
    ("precision", "ndcg", 0.8, "the top chunk is good but the rest is noise"),
    ("rank_weighted_precision", "hit_rate", 0.5, "something relevant is retrieved but it is mostly noise"),
    ("judged_context_precision", "hit_rate", 0.5, "something relevant is retrieved but it is mostly noise"),
]


def average_ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    sorted_x = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sorted_x[j + 1] == sorted_x[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


MIN_RHO_N = 3  # queries both metrics scored, below which there is no rho


def spearman(x, y) -> float | None:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < MIN_RHO_N:
        return None
    rx, ry = average_ranks(x), average_ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


Z95 = 1.959963984540054
MIN_INTERVAL_N = 4


def rho_interval(rho: float | None, n: int) -> tuple[float, float] | None:
    """The 95% interval of Spearman's rho over ``n`` queries (see the module docstring), or None
    below 4 queries.

    >>> [round(x, 2) for x in rho_interval(0.41, 6)]
    [-0.63, 0.92]
    """
    if rho is None or n < MIN_INTERVAL_N:
        return None
    r = max(-0.999, min(0.999, rho))
    z, se = math.atanh(r), math.sqrt((1 + r * r / 2) / (n - 3))
    return math.tanh(z - Z95 * se), math.tanh(z + Z95 * se)


@dataclass
class Pair:
    a: str
    b: str
    rho: float | None
    n: int
    expected: float | None = None
    meaning: str = ""

    @property
    def ci95(self) -> tuple[float, float] | None:
        return rho_interval(self.rho, self.n)

    @property
    def diverges(self) -> bool:
        """Below the expected value with 95% confidence (the interval's upper end is below it)."""
        ci = self.ci95
        return self.expected is not None and ci is not None and ci[1] < self.expected

    @property
    def undecided(self) -> bool:
        """Below the expected value here, but too few queries to tell (no interval, or it reaches it)."""
        return self.expected is not None and self.rho is not None and self.rho < self.expected \
            and not self.diverges


def _base(name: str) -> str:
    return re.split(r"[(@]", name, maxsplit=1)[0]


def correlate(run) -> list[Pair]:
    names = list(run.summary)
    values = {n: run.values(n) for n in names}
    pairs = []
    for a, b in itertools.combinations(names, 2):
        common = [i for i in values[a] if values[a][i] is not None and values[b].get(i) is not None]
        rho = spearman([values[a][i] for i in common], [values[b][i] for i in common])
        expected = next(((t, why) for x, y, t, why in EXPECTED if {_base(a), _base(b)} == {x, y}
                         and "(" not in a + b), (None, ""))
        pairs.append(Pair(a, b, rho, len(common), expected[0], expected[1]))
    return pairs


def too_few(pairs: list[Pair]) -> tuple[dict[str, int], list[Pair]]:
    """The pairs with too few queries for a rho (fewer than 3 scored by both metrics), grouped so
    that they can be said once: the metrics every one of whose pairs is such, each with the most
    queries it shares with another metric (a metric scored only where the sample has an answer
    shares 1 query on a sample of 6 with one answer), and the other such pairs.

    >>> few, rest = too_few([Pair("p", "r", 0.5, 6), Pair("p", "f", None, 1), Pair("r", "f", None, 1)])
    >>> few, rest
    ({'f': 1}, [])
    """
    thin = [p for p in pairs if p.n < MIN_RHO_N]
    names = {n for p in pairs for n in (p.a, p.b)}
    only = {n: max(p.n for p in pairs if n in (p.a, p.b)) for n in sorted(names)
            if all(p.n < MIN_RHO_N for p in pairs if n in (p.a, p.b))}
    metrics = {n: only[n] for n in (x for p in pairs for x in (p.a, p.b)) if n in only}  # in the run's order
    return metrics, [p for p in thin if p.a not in metrics and p.b not in metrics]
