"""A measure's 95% interval: the percentile bootstrap (:mod:`ragmeter.core.bootstrap`), or where
that bootstrap is costly and n is large, its normal approximation with a skewness term.

The percentile bootstrap of the mean takes the 2.5th and 97.5th percentiles of the bootstrap
distribution of the mean. That distribution is known in its moments: over resamples of n values
drawn with replacement, the resample mean has mean x̄, standard deviation s / √n and skewness
γ / √n, where s and γ are the values' plug-in (divide-by-n) standard deviation and skewness,
s² = m2, γ = m3 / m2^(3/2), m_k = Σ (x_i - x̄)^k / n. Its α quantile, by the Cornish-Fisher
expansion of the Edgeworth series of the mean (Hall 1992, *The Bootstrap and Edgeworth
Expansion*, §2.5; Efron & Tibshirani 1993, §14.3, for the percentile interval's skewness), is

    q(α) = x̄ + (s / √n) · (z_α + γ / (6 √n) · (z_α² - 1)) + O(s / n^(3/2)),

z_α the standard normal quantile. The Monte Carlo bootstrap estimates the same quantiles from
:data:`~ragmeter.core.bootstrap.RESAMPLES` resamples, with an error of about 0.06 standard
errors (s / √n) at the 2.5th percentile (sd of a sample quantile: √(α(1-α)/B) / φ(z_α)); the
approximation's error is of order 1 / n of a standard error, far below that at the n where it
is used.

Where it is used (:func:`mean_interval`): at :data:`APPROXIMATE_FROM` values or more, when a
bootstrap resample would cost more than :data:`APPROXIMATE_BEYOND` draws (counts of the values
seen 8+ times, and a draw per value of the rest: the method of
:mod:`ragmeter.core.bootstrap`). A measure of few distinct values (precision, hit rate,
reciprocal rank at a cut-off) costs a count per value at any n, and keeps the bootstrap's
numbers; a measure of many (nDCG, a judge's graded score over a large run) is where the
bootstrap's time grows with n, and where n is large enough for the approximation. The method
used is named in the measure's provenance (``interval``): :data:`METHOD` for the bootstrap,
:data:`APPROXIMATE_METHOD` for the approximation.

>>> mean_interval([0.0, 1.0] * 50)[1] == METHOD  # small n: the bootstrap, its numbers unchanged
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ragmeter.core.bootstrap import METHOD, MULTINOMIAL_COST, bootstrap_ci

#: Values from which the approximation may be used: the skewness term is then at most
#: γ / (6 √n) · 2.84 < 0.01 γ standard errors, and its remainder of order 1 / n smaller still.
APPROXIMATE_FROM = 20_000
#: Draws per bootstrap resample beyond which the approximation is used: 2,000 resamples of
#: 2,048 draws each is about 0.1 s of a run's time, and the cost grows with n from there
#: (nDCG@10 of bench/label_bench.py: 10,700 at 50,000 values, 40,600 at 500,000).
APPROXIMATE_BEYOND = 2_048
APPROXIMATE_METHOD = (f"normal approximation to percentile bootstrap v2 (mean +- z * s / sqrt(n), Cornish-Fisher "
                      f"skewness term; Hall 1992, 2.5): {APPROXIMATE_FROM}+ values, over {APPROXIMATE_BEYOND} draws "
                      f"a resample")
Z_975 = 1.959963984540054  # the standard normal's 0.975 quantile


def mean_interval(values: Sequence[float] | np.ndarray) -> tuple[tuple[float, float] | None, str]:
    """The 95% interval of the mean of ``values`` (sorted, for a bootstrap that does not depend on
    their order) and the method that gave it: :data:`METHOD` or :data:`APPROXIMATE_METHOD`."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) >= APPROXIMATE_FROM and bootstrap_draws(x) > APPROXIMATE_BEYOND:
        return normal_interval(x), APPROXIMATE_METHOD
    return bootstrap_ci(x), METHOD


def bootstrap_draws(x: np.ndarray) -> int:
    """What a resample of :func:`~ragmeter.core.bootstrap.bootstrap_ci` costs on sorted ``x``: a
    count per value seen :data:`~ragmeter.core.bootstrap.MULTINOMIAL_COST` times or more, a
    draw per occurrence of the others (n draws where no value is that frequent)."""
    if len(x) == 0:
        return 0
    starts = np.flatnonzero(np.concatenate(([True], x[1:] != x[:-1])))
    counts = np.diff(np.append(starts, len(x)))
    frequent = counts >= MULTINOMIAL_COST
    return int(np.count_nonzero(frequent)) + int(counts[~frequent].sum())


def normal_interval(values: Sequence[float] | np.ndarray, *, level: float = 0.95) -> tuple[float, float] | None:
    """q(α/2), q(1 - α/2) of the module's expansion; (x̄, x̄) when every value is the same."""
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if n == 0:
        return None
    mean = float(x.mean())
    d = x - mean
    m2 = float(np.dot(d, d)) / n
    if n == 1 or m2 == 0.0:
        return mean, mean
    m3 = float(np.dot(d * d, d)) / n
    se, skew = math.sqrt(m2 / n), m3 / m2 ** 1.5
    z = Z_975 if level == 0.95 else _z(1 - (1 - level) / 2)
    bend = skew / (6 * math.sqrt(n)) * (z * z - 1)
    return mean + se * (-z + bend), mean + se * (z + bend)


def _z(p: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)
