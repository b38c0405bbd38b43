"""Seeded percentile-bootstrap confidence intervals in bounded memory (reruns print the same
interval, whatever the batch size).

CI_95 = the 2.5th and 97.5th percentiles of the means of B resamples (with replacement) of
the scored values (Efron & Tibshirani 1993, ch. 13). The seed is fixed, so the same values
always give the same interval.

A resample is drawn one of two exact ways, chosen from the values alone (never from the batch
size): when the values take few distinct values u_1 < ... < u_U (hit rate, P@k, RR@k, recall),
its counts over them are Multinomial(n, f_j / n) (f_j: how often u_j occurs), and its mean is
sum(c_j * u_j) / n, O(U) per resample; otherwise n uniform indices into the values, O(n).
Resamples are drawn ``batch`` at a time from one generator stream (numpy's draws do not
depend on how a stream is split), each mean is summed within its own row, so any batch size
gives the same means bit for bit; a batch holds at most :data:`BATCH_BYTES` of draws.

>>> bootstrap_ci([1.0, 1.0, 1.0])
(1.0, 1.0)
>>> bootstrap_ci([0.0, 1.0] * 50, batch=1) == bootstrap_ci([0.0, 1.0] * 50, batch=2000)
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

SEED = 20261130
RESAMPLES = 2000
BATCH_BYTES = 32 * 2**20  # the draws one batch of resamples may hold
MULTINOMIAL_COST = 32  # one multinomial category costs about this many uniform index draws


def bootstrap_ci(values: Sequence[float] | np.ndarray, *, level: float = 0.95, resamples: int = RESAMPLES,
                 seed: int = SEED, batch: int | None = None) -> tuple[float, float] | None:
    """The percentile interval of the mean of ``values`` (pass them sorted for an interval that
    does not depend on their order). ``batch``: resamples drawn at once (default: as many as
    :data:`BATCH_BYTES` allows); it changes the memory used, never the interval."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        return None
    if len(x) == 1:
        return float(x[0]), float(x[0])
    means = np.concatenate(list(resample_means(x, resamples=resamples, seed=seed, batch=batch)))
    alpha = (1 - level) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return float(lo), float(hi)


def resample_means(x: np.ndarray, *, resamples: int = RESAMPLES, seed: int = SEED,
                   batch: int | None = None) -> Iterator[np.ndarray]:
    """The means of ``resamples`` bootstrap resamples of ``x``, ``batch`` at a time."""
    n = len(x)
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(x, return_counts=True)
    by_value = len(distinct) * MULTINOMIAL_COST < n
    width = len(distinct) if by_value else n
    step = max(1, min(resamples, batch or BATCH_BYTES // (16 * width)))  # draws and terms
    p = counts / n
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        if by_value:
            drawn = rng.multinomial(n, p, size=size)
            terms = drawn * distinct[None, :]
        else:
            terms = np.take(x, rng.integers(0, n, size=(size, n), dtype=np.uint32 if n < 2**32 else np.int64))
        # numpy sums a contiguous row on its own (pairwise within the row): a row's sum cannot
        # depend on how many rows the batch has
        yield terms.sum(axis=1) / n


def paired_bootstrap_ci(diffs: Sequence[float], **kw) -> tuple[float, float] | None:
    """The interval of the mean paired difference (same resampling, on per-query differences)."""
    return bootstrap_ci(diffs, **kw)
