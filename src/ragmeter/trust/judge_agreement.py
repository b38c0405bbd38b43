"""Judge-vs-human agreement, and prediction-powered estimates of a metric's mean.

Per metric, on the samples with a human label:

- Cohen's kappa (Cohen 1960) and the confusion matrix, for verdict-like values (the
  labels are categorical: at most 10 distinct values in both);
- Spearman's rho and Kendall's tau-b (Kendall 1945), for scores;
- the prediction-powered estimate of the mean (Angelopoulos et al. 2023; ARES, Saad-Falcon
  et al. 2024): theta = mean(judge over all N scored samples) + mean(human - judge over the
  n labeled ones), with the 95% interval theta +/- 1.96 * sqrt(var(judge)/N + var(human -
  judge)/n), next to the plain judge mean.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragmeter.analysis.correlate import spearman

Z95 = 1.959963984540054
MIN_PAIRS = 2  # kappa, Spearman, Kendall and the PPI interval need two labeled samples at least


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa (Cohen 1960) of two raters' labels on the same items (any hashable labels):
    ``kappa = (p_o - p_e) / (1 - p_e)``, ``p_o`` the share of items they label alike and
    ``p_e = sum_g n_g(a) n_g(b) / n^2`` the agreement their label counts give by chance.

    Undefined (None) when nothing was rated, and when chance agreement is already 1, which
    happens only when both raters give every item the same one label: then ``p_o`` is 1 too and
    kappa is 0/0 (scikit-learn's ``cohen_kappa_score`` gives NaN). Not 1.0: two constant raters
    show no skill to measure, and an undefined value stays out of every mean. The one kappa of
    ragmeter: judge against human (:func:`agreement`) and labeler against labeler
    (:mod:`ragmeter.label.agreement`).

    >>> cohen_kappa(["yes", "no", "yes", "yes"], ["yes", "no", "no", "yes"])
    0.5
    >>> cohen_kappa([1, 1, 1], [1, 1, 1]) is None
    True
    """
    if len(a) != len(b):
        raise ValueError("both raters must label the same items")
    n = len(a)
    if n == 0:
        return None
    p_o = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[k] * cb[k] for k in set(ca) | set(cb)) / n ** 2
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1 - p_e)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """tau-b = (concordant - discordant) / sqrt((n0 - n1)(n0 - n2)), with ties in x (n1), y (n2)."""
    xs, ys = np.asarray(x, float), np.asarray(y, float)
    n = len(xs)
    if n < 2:
        return None
    dx = np.sign(xs[:, None] - xs[None, :])
    dy = np.sign(ys[:, None] - ys[None, :])
    upper = np.triu_indices(n, 1)
    s = float((dx * dy)[upper].sum())
    n0 = n * (n - 1) / 2
    tx = float((dx[upper] == 0).sum())
    ty = float((dy[upper] == 0).sum())
    denom = math.sqrt((n0 - tx) * (n0 - ty))
    return None if denom == 0 else s / denom


def ppi_mean(judge_all: Sequence[float], judge_labeled: Sequence[float], human: Sequence[float]
             ) -> tuple[float, tuple[float, float]] | None:
    """Prediction-powered mean and its 95% interval."""
    f_all = np.asarray(judge_all, float)
    f_lab, h = np.asarray(judge_labeled, float), np.asarray(human, float)
    n, big_n = len(h), len(f_all)
    if n < 2 or big_n < 2:
        return None
    rectifier = h - f_lab
    theta = float(f_all.mean() + rectifier.mean())
    se = math.sqrt(f_all.var(ddof=1) / big_n + rectifier.var(ddof=1) / n)
    return theta, (theta - Z95 * se, theta + Z95 * se)


@dataclass
class Agreement:
    metric: str
    n: int
    judge_mean: float | None
    human_mean: float | None
    kappa: float | None = None
    confusion: dict = field(default_factory=dict)
    spearman: float | None = None
    kendall: float | None = None
    ppi: float | None = None
    ppi_ci95: tuple[float, float] | None = None

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def agreement(judge_values: Mapping[str, float | None], human: Mapping[str, float], metric: str) -> Agreement:
    scored = {i: v for i, v in judge_values.items() if v is not None}
    both = [i for i in human if i in scored]
    f, h = [scored[i] for i in both], [float(human[i]) for i in both]
    out = Agreement(metric, len(both), float(np.mean(list(scored.values()))) if scored else None,
                    float(np.mean(h)) if h else None)
    if not both:
        return out
    if len(set(f) | set(h)) <= 10:
        # one labeled sample: chance agreement cannot be estimated, so kappa is not defined (it read 0.000)
        out.kappa = cohen_kappa(f, h) if len(both) >= MIN_PAIRS else None
        out.confusion = {f"judge={a}|human={b}": c for (a, b), c in sorted(Counter(zip(f, h)).items())}
    out.spearman, out.kendall = spearman(f, h), kendall_tau_b(f, h)
    est = ppi_mean(list(scored.values()), f, h)
    if est:
        out.ppi, out.ppi_ci95 = est
    return out


__all__ = ["agreement", "cohen_kappa", "kendall_tau_b", "ppi_mean", "Agreement"]
