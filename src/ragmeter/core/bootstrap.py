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
gives the same means bit for bit; a batch holds at most :data:`BATCH_BYTES` of draws (small
enough to stay in the CPU's cache: 2,000 resamples of 50,000 values take 0.45 s in batches of
10, 0.8 s in batches of 41). The index draws of the next batch are made on a second thread
while this one is gathered and summed (numpy lets go of the GIL in both), from the same one
generator in the same order, so the draws are the ones a single thread makes. They are
``Generator.integers(0, n, dtype=np.uint32)``'s, made as numpy makes them but a whole array at
a time (:func:`uniform_indices`: a third faster).

>>> bootstrap_ci([1.0, 1.0, 1.0])
(1.0, 1.0)
>>> bootstrap_ci([0.0, 1.0] * 50, batch=1) == bootstrap_ci([0.0, 1.0] * 50, batch=2000)
True
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

SEED = 20261130
RESAMPLES = 2000
BATCH_BYTES = 8 * 2**20  # the draws one batch of resamples may hold
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
    sizes = [min(step, resamples - start) for start in range(0, resamples, step)]
    if by_value:
        p = counts / n
        for size in sizes:
            terms = rng.multinomial(n, p, size=size) * distinct[None, :]
            yield _row_means(terms, n)
        return
    draws = uniform_indices(rng, n, [size * n for size in sizes])
    if len(sizes) == 1:
        yield _row_means(np.take(x, next(draws).reshape(sizes[0], n)), n)
        return
    with ThreadPoolExecutor(1, thread_name_prefix="ragmeter-bootstrap") as drawer:
        # one draw in flight at a time, in order: the generator's stream is what one thread draws
        pending = drawer.submit(next, draws)
        for i, size in enumerate(sizes):
            drawn = pending.result()
            if i + 1 < len(sizes):
                pending = drawer.submit(next, draws)
            yield _row_means(np.take(x, drawn.reshape(size, n)), n)


def uniform_indices(rng: np.random.Generator, n: int, counts: Iterable[int]) -> Iterator[np.ndarray]:
    """For each count, the next ``count`` draws of ``rng.integers(0, n, dtype=np.uint32)`` (an
    int64 array for n >= 2**32), the same numbers as those calls give in turn.

    numpy draws such an integer by Lemire's method on 32-bit halves of the PCG64 stream (low
    half first): m = u * n, keep m >> 32 unless m mod 2**32 < 2**32 mod n, where the draw is
    made again from the next half. Here whole arrays of raw words are turned into indices at
    once and the rejected halves dropped, which is the same sequence (a test holds it to
    ``integers``); another bit generator or byte order calls ``integers`` itself."""
    bits = rng.bit_generator
    if n >= 2**32 or sys.byteorder != "little" or type(bits).__name__ != "PCG64" or bits.state["has_uint32"]:
        dtype = np.uint32 if n < 2**32 else np.int64
        for count in counts:
            yield rng.integers(0, n, size=count, dtype=dtype)
        return
    threshold = np.uint32((2**32 - n) % n)  # numpy's (UINT32_MAX - rng) % rng_excl, rng = n - 1
    pending = np.empty(0, dtype=np.uint32)
    for count in counts:
        parts, have = [pending], len(pending)
        while have < count:
            halves = bits.random_raw((count - have + 1) // 2).view(np.uint32)  # low half, then high
            scaled = halves.astype(np.uint64)
            scaled *= np.uint64(n)
            scaled >>= np.uint64(32)
            drawn = scaled.astype(np.uint32)
            if threshold:
                rejected = halves * np.uint32(n) < threshold  # m mod 2**32, in wrapping uint32 arithmetic
                if rejected.any():
                    drawn = drawn[~rejected]
            parts.append(drawn)
            have += len(drawn)
        joined = parts[-1] if len(parts) == 2 and not len(parts[0]) else np.concatenate(parts)
        pending = joined[count:]
        yield joined[:count]


def _row_means(terms: np.ndarray, n: int) -> np.ndarray:
    """Each row's sum / n. numpy sums a contiguous row on its own (pairwise within the row): a
    row's sum cannot depend on how many rows the batch has."""
    return terms.sum(axis=1) / n


def paired_bootstrap_ci(diffs: Sequence[float], **kw) -> tuple[float, float] | None:
    """The interval of the mean paired difference (same resampling, on per-query differences)."""
    return bootstrap_ci(diffs, **kw)
