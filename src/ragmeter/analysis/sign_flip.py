"""The paired randomization (sign-flip) test in memory that does not grow with n, and what it can
detect.

Under H0 each per-sample difference d_i is as likely to have had the other sign; the two-sided p
is the share of sign patterns s whose |mean(s * d)| reaches |mean(d)| (Fisher 1935; Smucker,
Allan & Carterette 2007 for IR). By n:

- ``n <= EXACT_LIMIT`` (16): all 2^n patterns, exactly.
- ``n <= MONTE_CARLO_LIMIT`` (5,000): ``PERMUTATIONS`` (20,000) seeded patterns, drawn a block
  of rows at a time: the patterns ``default_rng(seed).choice((1.0, -1.0), size=(PERMUTATIONS, n))``
  holds (each sign is the top bit of one 32-bit half of the PCG64 stream, low half first, as numpy
  draws a bounded integer), each pattern's mean taken within its own row: the p of that one
  matrix, bit for bit, at any block size (:func:`sign_rows`).
- larger n: only the m nonzero differences matter (a zero flips to itself). The largest ones,
  as few as leave no remaining difference holding more than ``LINDEBERG`` of the remaining
  sum(d^2), are flipped as above (exactly for 16 or fewer, else 20,000 seeded patterns); the sum
  of the rest, R = sum(s_i d_i), is normal with mean 0 and variance sum(d_i^2) (Lindeberg's
  central limit theorem), so each pattern c of the large ones contributes
  P(|c + R| >= |sum d|) = Q((t - c) / sigma) + Q((t + c) / sigma), Q the normal upper tail, and p
  is their mean. With no large difference that is the normal approximation
  p = erfc(|sum d| / sqrt(2 sum d^2)); s_i d_i is symmetric, so its error has no skew term.

Time is linear in n (at most 5,000 x 20,000 sign draws), and what the test holds beside the
differences is a block of sign patterns (up to ``BLOCK_BYTES``) or a slice of them (``CHUNK``),
whatever n; only where a few differences dominate are the nonzero ones copied and sorted.

:func:`detectable_change` is the power statement: the smallest true mean change that the test,
at ``alpha`` over ``compared`` metrics (Bonferroni, Holm's strictest step), finds with
probability 80%, from the spread of the observed differences: (z_{1 - alpha/2m} + z_0.8) *
sd(d) / sqrt(n) (normal approximation; Cohen 1988, ch. 2).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from statistics import NormalDist

import numpy as np

from ragmeter.core.bootstrap import SEED

EXACT_LIMIT = 16
PERMUTATIONS = 20_000
MONTE_CARLO_LIMIT = 5_000
LINDEBERG = 1e-3  # the largest share of sum(d^2) one difference may hold in the normal part
BLOCK_BYTES = 4 * 2**20  # the signs one block of patterns holds (float64)
CHUNK = 2**16  # the differences summed at once
TOLERANCE = 1e-12  # a pattern whose |mean| is within this of the observed one counts as reaching it
POWER = 0.8


def randomization_p(diffs: Sequence[float] | np.ndarray, *, seed: int = SEED) -> float:
    """Two-sided paired sign-flip test of mean(diffs) == 0 (see the module for how, by n).

    >>> randomization_p([1.0, 1.0, 1.0])  # of 8 patterns, +++ and --- reach |mean| 1
    0.25
    """
    d = np.asarray(diffs, dtype=np.float64)
    n = len(d)
    if n == 0 or _near_zero(d):
        return 1.0
    if n <= EXACT_LIMIT:
        return _exact_share(d, abs(d.mean()))
    if n <= MONTE_CARLO_LIMIT:
        return _random_share(d, abs(d.mean()), seed)
    total, squares, largest = _sums(d)
    if largest <= LINDEBERG * squares:  # no difference holds more than LINDEBERG of sum(d^2): all normal
        return math.erfc(abs(total) / math.sqrt(2 * squares))
    return _mixed_p(d[d != 0], seed)  # a few large differences: flipped, the rest normal


def _chunks(d: np.ndarray) -> Iterator[np.ndarray]:
    """``d`` in slices of ``CHUNK`` (views: what is computed over one is all that is held)."""
    for start in range(0, len(d), CHUNK):
        yield d[start:start + CHUNK]


def _near_zero(d: np.ndarray) -> bool:
    """``np.allclose(d, 0)`` (every |d| <= 1e-8; NaN is not), a slice at a time."""
    return all(bool((np.abs(c) <= 1e-8).all()) for c in _chunks(d))


def _sums(d: np.ndarray) -> tuple[float, float, float]:
    """sum(d), sum(d^2) and max(d^2), a slice at a time."""
    total = squares = largest = 0.0
    for c in _chunks(d):
        sq = c * c
        total += float(c.sum())
        squares += float(sq.sum())
        largest = max(largest, float(sq.max()))
    return total, squares, largest


def _exact_share(d: np.ndarray, observed: float) -> float:
    """The share of all 2^n sign patterns whose |mean| reaches ``observed``."""
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
    means = np.abs((signs * d).mean(axis=1))
    return float(np.mean(means >= observed - TOLERANCE))


def _random_share(d: np.ndarray, observed: float, seed: int) -> float:
    """The share of ``PERMUTATIONS`` seeded sign patterns whose |mean| reaches ``observed``."""
    reached = 0
    for signs in sign_rows(len(d), PERMUTATIONS, seed):
        reached += int(np.count_nonzero(np.abs((signs * d).mean(axis=1)) >= observed - TOLERANCE))
    return reached / PERMUTATIONS


def sign_rows(n: int, rows: int, seed: int, *, block_bytes: int = BLOCK_BYTES) -> Iterator[np.ndarray]:
    """The rows of ``default_rng(seed).choice((1.0, -1.0), size=(rows, n))``, a block of rows at a
    time (at most ``block_bytes`` of float64 signs, at least one row).

    Such a ``choice`` draws ``integers(0, 2)`` per sign: numpy takes one 32-bit half of the stream
    per draw (low half of each 64-bit word first, no half ever rejected for a range of 2) and keeps
    its top bit; index 0 is +1.0. A block that ends inside a word keeps the word's other half for
    the next."""
    bits = np.random.default_rng(seed).bit_generator
    per_block = max(1, min(rows, block_bytes // (8 * max(1, n))))
    spare: np.ndarray | None = None
    done = 0
    while done < rows:
        size = min(per_block, rows - done)
        count = size * n
        words = bits.random_raw((count - (0 if spare is None else 1) + 1) // 2)
        halves = np.empty(2 * len(words), dtype=np.uint8)
        halves[0::2] = (words >> np.uint64(31)) & np.uint64(1)
        halves[1::2] = words >> np.uint64(63)
        if spare is not None:
            halves = np.concatenate((spare, halves))
        spare = halves[count:count + 1] if len(halves) > count else None
        signs = 1.0 - 2.0 * halves[:count].reshape(size, n)
        done += size
        yield signs


def _mixed_p(d: np.ndarray, seed: int) -> float:
    """p over the nonzero differences ``d`` of a large sample: the large ones flipped, the rest's
    sum normal (see the module)."""
    order = np.argsort(-np.abs(d), kind="stable")
    d = d[order]
    squares = d * d
    remaining = np.cumsum(squares[::-1])[::-1]  # sum of squares from i on
    fits = np.flatnonzero(squares <= LINDEBERG * remaining)  # d[i] holds little of what remains from i
    k = int(fits[0]) if len(fits) else len(d)
    sigma = math.sqrt(float(remaining[k])) if k < len(d) else 0.0
    t = abs(float(d.sum()))
    large = d[:k]
    if sigma == 0.0:  # every difference flipped
        if k <= EXACT_LIMIT:
            return _exact_share(large, t / k)
        return _random_share(large, t / k, seed)
    if k == 0:
        return math.erfc(t / (sigma * math.sqrt(2)))
    tail = np.frompyfunc(lambda z: 0.5 * math.erfc(z / math.sqrt(2)), 1, 1)
    if k <= EXACT_LIMIT:
        sums = np.array(list(itertools.product((1.0, -1.0), repeat=k))) @ large
        return float(np.mean((tail((t - sums) / sigma) + tail((t + sums) / sigma)).astype(np.float64)))
    total = 0.0
    for signs in sign_rows(k, PERMUTATIONS, seed):
        sums = signs @ large
        total += float(np.sum((tail((t - sums) / sigma) + tail((t + sums) / sigma)).astype(np.float64)))
    return total / PERMUTATIONS


def smallest_p(differing: int) -> float:
    """The smallest p :func:`randomization_p` can give on ``differing`` nonzero paired differences:
    2 / 2^n, when every sign points one way (only those signs and their mirror image are as far
    from 0; a tied pair flips to itself). Past ``EXACT_LIMIT`` the p is estimated from random
    flips or the normal approximation and can come near 0.

    >>> smallest_p(6), smallest_p(0)
    (0.03125, 1.0)
    """
    if differing <= 0:
        return 1.0
    return 2.0 ** (1 - differing) if differing <= EXACT_LIMIT else 0.0


def samples_needed(compared: int, alpha: float) -> int:
    """The fewest differing paired samples at which the most significant of ``compared`` metrics
    can pass Holm's first step: ``compared * 2 / 2^n < alpha``.

    >>> samples_needed(5, 0.05), samples_needed(1, 0.05)
    (8, 6)
    """
    n = 1
    while max(1, compared) * smallest_p(n) >= alpha:
        n += 1
    return n


def spread(diffs: Sequence[float] | np.ndarray) -> float | None:
    """The sample standard deviation of the differences (n - 1 in the denominator); None when it
    cannot be told from them (fewer than 2, all the same, or not numbers)."""
    d = np.asarray(diffs, dtype=np.float64)
    if len(d) < 2 or not np.ptp(d) > 0:  # every difference the same (or NaN): no spread to tell from
        return None
    return float(np.std(d, ddof=1))


def detectable_change(sd: float | None, n: int, alpha: float, compared: int = 1) -> float | None:
    """The smallest true change in the mean that the test finds significant with probability
    ``POWER`` (80%) at ``alpha`` over ``compared`` metrics, for ``n`` paired differences whose
    standard deviation is ``sd`` (:func:`spread`): ``math.inf`` when no change can be significant
    at this n (every sign one way is not enough: ``compared * smallest_p(n) >= alpha``), None when
    it cannot be told (no spread).

    >>> round(detectable_change(spread([0.1, -0.1] * 50), 100, 0.05), 4)  # (1.96 + 0.8416) * 0.1005 / 10
    0.0282
    """
    if max(1, compared) * smallest_p(n) >= alpha:
        return math.inf
    if sd is None or n < 2:
        return None
    z = NormalDist().inv_cdf(1 - alpha / (2 * max(1, compared))) + NormalDist().inv_cdf(POWER)
    return z * sd / math.sqrt(n)
