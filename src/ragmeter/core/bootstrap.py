"""Seeded percentile-bootstrap confidence intervals in bounded memory (reruns print the same
interval, whatever the batch size).

CI_95 = the 2.5th and 97.5th percentiles of the means of B resamples (with replacement) of
the scored values (Efron & Tibshirani 1993, ch. 13). The seed is fixed, so the same values
always give the same interval.

How a resample is drawn (method :data:`METHOD`, named in every measure's provenance). Let the
values take the distinct values u_1 < ... < u_K, u_j f_j times. One draw of a resample is u_j
with probability f_j / n, so a resample's counts over the values are Multinomial(n, f / n) and
its mean is sum(c_j * u_j) / n. A value seen at least :data:`MULTINOMIAL_COST` times ("frequent")
gets its count from that multinomial (numpy draws it as a binomial per value); the others, pooled
into one cell, get the pool's count c from it, and then c uniform draws among the pooled values
(one of the pool's f_L values each, so each value still has probability 1/n per draw). That is
the same distribution of resamples as n uniform indices into the values: a bootstrap of the
mean, exactly, whose cost per resample is the number of frequent values plus the number of
infrequent ones, never n (for the 500,000 nDCG values of bench/label_bench.py, 4,100 counts and
36,000 draws instead of 500,000 draws). It is not the same draws: where both kinds of value
occur, the intervals differ from those of version 1 (which drew n indices unless K * 32 < n,
then counts over every value) by sampling error only; where no value is frequent the draws are
version 1's n indices, bit for bit, and where every one is, counts over every value as version 1
drew them when K * 32 < n.

Resamples are drawn ``batch`` at a time from generator streams (numpy's draws do not depend on
how a stream is split): the counts from one, the indices from another, each batch's means summed
within their own rows, so any batch size gives the same means bit for bit; a batch holds at
most :data:`BATCH_BYTES` of draws (small enough to stay in the CPU's cache). The index draws of
the next batch are made on a second thread while this one is gathered and summed (numpy lets go
of the GIL in both), from the same one generator in the same order, so the draws are the ones a
single thread makes. They are ``Generator.integers(0, n, dtype=np.uint32)``'s, made as numpy
makes them but a whole array at a time (:func:`uniform_indices`: a third faster).

>>> bootstrap_ci([1.0, 1.0, 1.0])
(1.0, 1.0)
>>> bootstrap_ci([0.0, 1.0] * 50, batch=1) == bootstrap_ci([0.0, 1.0] * 50, batch=2000)
True
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ragmeter.core.results import INTERVAL_METHOD as METHOD  # noqa: F401  (named in provenance)

SEED = 20261130
RESAMPLES = 2000
BATCH_BYTES = 8 * 2**20  # the draws one batch of resamples may hold
MULTINOMIAL_COST = 8  # a value seen this often gets its count by a binomial draw (measured: cheaper than its draws)


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
    lo, hi = quantiles(means, [alpha, 1 - alpha]).tolist()
    return lo, hi


def quantiles(values: np.ndarray, q: Sequence[float]) -> np.ndarray:
    """``np.quantile(values, q)`` (its default 'linear' method, the same bits), without what
    ``np.quantile`` imports on its first call (``numpy.ma``: a fifth of a small run's start-up).

    Sorted values v, h = (n - 1) * q, j = floor(h), g = h - j: v[j] + (v[j+1] - v[j]) * g, or
    for g >= 0.5, v[j+1] - (v[j+1] - v[j]) * (1 - g) (numpy's ``_lerp``); h >= n - 1 gives v[n-1]."""
    v = np.sort(values)
    n = len(v)
    at = (n - 1) * np.asarray(q, dtype=np.float64)
    below = np.floor(at)
    above_end = at >= n - 1
    below[above_end] = -1
    upper = below + 1
    upper[above_end] = -1
    below_i, upper_i = below.astype(np.intp), upper.astype(np.intp)
    gamma = at - below_i
    a, b = v[below_i], v[upper_i]
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def resample_means(x: np.ndarray, *, resamples: int = RESAMPLES, seed: int = SEED,
                   batch: int | None = None) -> Iterator[np.ndarray]:
    """The means of ``resamples`` bootstrap resamples of ``x``, ``batch`` at a time (see the
    module: counts for the frequent values, uniform draws among the rest)."""
    n = len(x)
    distinct, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    frequent = counts >= MULTINOMIAL_COST
    if frequent.all():  # counts over every value
        rng = np.random.default_rng(seed)
        p = counts / n
        for size in _sizes(resamples, batch, len(distinct)):
            yield _row_means(rng.multinomial(n, p, size=size) * distinct[None, :], n)
        return
    if not frequent.any():  # n indices into the values
        yield from _index_means(x, np.random.default_rng(seed), _sizes(resamples, batch, n), lambda size: n * size,
                                lambda size, drawn: _row_means(np.take(x, drawn.reshape(size, n)), n))
        return
    yield from _pooled_means(x, distinct[frequent], counts[frequent], x[~frequent[inverse]], resamples, seed, batch)


def _pooled_means(x: np.ndarray, values: np.ndarray, counts: np.ndarray, pool: np.ndarray, resamples: int,
                  seed: int, batch: int | None) -> Iterator[np.ndarray]:
    """Counts over the frequent ``values`` and the ``pool`` of the others (one stream), then
    uniform draws into the pool (another): (sum(c_j * u_j) + the pool draws' sum) / n.

    Every resample's counts come first (a row sum each, and the pool's count c); then the
    pool draws, c for each resample, end to end, each resample's summed on its own
    (``np.add.reduceat``: a sum over its draws alone, so never dependent on the batch)."""
    n = len(x)
    count_stream, index_stream = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    p = np.append(counts, len(pool)) / n
    counted = np.empty(resamples)
    pooled = np.empty(resamples, dtype=np.int64)
    done = 0
    for size in _sizes(resamples, batch, len(values) + 1):
        c = count_stream.multinomial(n, p, size=size)
        counted[done:done + size] = (c[:, :-1] * values[None, :]).sum(axis=1)
        pooled[done:done + size] = c[:, -1]
        done += size
    sizes = _sizes(resamples, batch, int(pooled.max()))
    ends = np.cumsum(sizes)
    bounds = [(int(stop - size), int(stop)) for size, stop in zip(sizes, ends)]
    asked = iter([int(pooled[a:b].sum()) for a, b in bounds])
    batches = iter(bounds)

    def means(size: int, drawn: np.ndarray) -> np.ndarray:
        start, stop = next(batches)
        c = pooled[start:stop]
        sums = np.zeros(size)
        filled = np.flatnonzero(c)
        if len(filled):  # each resample's draws summed alone; one that draws nothing sums to 0
            last = filled[-1] + 1
            sums[:last] = np.add.reduceat(np.take(pool, drawn), (np.cumsum(c) - c)[:last])
            sums[:last][c[:last] == 0] = 0.0
        return (counted[start:stop] + sums) / n

    yield from _index_means(pool, index_stream, sizes, lambda _: next(asked), means)


def _sizes(resamples: int, batch: int | None, width: int) -> list[int]:
    """Resamples per batch: ``batch``, or as many as :data:`BATCH_BYTES` allows at ``width``
    draws (8 bytes of draws and terms each) a resample."""
    step = max(1, min(resamples, batch or BATCH_BYTES // (16 * max(1, width))))
    return [min(step, resamples - start) for start in range(0, resamples, step)]


def _index_means(x: np.ndarray, rng: np.random.Generator, sizes: list[int], draws_of: Callable[[int], int],
                 means: Callable[[int, np.ndarray], np.ndarray]) -> Iterator[np.ndarray]:
    """Per batch, ``means(size, indices)`` of the batch's ``draws_of(size)`` uniform indices into
    ``x``; the next batch's indices drawn on a second thread (asked for in batch order, so the
    stream is what one thread draws)."""
    draws = uniform_indices(rng, len(x), map(draws_of, sizes))
    if len(sizes) == 1:
        yield means(sizes[0], next(draws))
        return
    with ThreadPoolExecutor(1, thread_name_prefix="ragmeter-bootstrap") as drawer:
        # one draw in flight at a time, in order: the generator's stream is what one thread draws
        pending = drawer.submit(next, draws)
        for i, size in enumerate(sizes):
            drawn = pending.result()
            if i + 1 < len(sizes):
                pending = drawer.submit(next, draws)
            yield means(size, drawn)


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
