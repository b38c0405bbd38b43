"""Seeded percentile-bootstrap confidence intervals (reruns print the same interval).

CI_95 = the 2.5th and 97.5th percentiles of the means of B resamples (with replacement) of
the scored values (Efron & Tibshirani 1993, ch. 13). The seed is fixed, so the same values
always give the same interval.

>>> bootstrap_ci([1.0, 1.0, 1.0])
(1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SEED = 20261130
RESAMPLES = 2000


def bootstrap_ci(values: Sequence[float], *, level: float = 0.95, resamples: int = RESAMPLES,
                 seed: int = SEED) -> tuple[float, float] | None:
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        return None
    if len(x) == 1:
        return float(x[0]), float(x[0])
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(resamples, len(x)))].mean(axis=1)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return float(lo), float(hi)


def paired_bootstrap_ci(diffs: Sequence[float], **kw) -> tuple[float, float] | None:
    """The interval of the mean paired difference (same resampling, on per-query differences)."""
    return bootstrap_ci(diffs, **kw)
