"""``ragmeter.analysis.sign_flip``: the paired sign-flip test in blocks gives the p the whole random
sign matrix gave (same seed, same patterns), in memory that does not grow with n; past 5,000
samples the normal part agrees with the flips; the power statement is the textbook formula."""

from __future__ import annotations

import itertools
import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.analysis import sign_flip
from ragmeter.analysis.sign_flip import (
    MONTE_CARLO_LIMIT,
    PERMUTATIONS,
    detectable_change,
    randomization_p,
    sign_rows,
    smallest_p,
    spread,
)
from ragmeter.core.bootstrap import SEED


def matrix_p(diffs, seed: int = SEED) -> float:
    """The test as ragmeter computed it before it streamed (main 0753add, analysis/compare.py): the
    whole 2^n or 20,000 x n sign matrix at once."""
    d = np.asarray(diffs, dtype=np.float64)
    n = len(d)
    if n == 0 or np.allclose(d, 0):
        return 1.0
    if n <= 16:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    else:
        signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(PERMUTATIONS, n))
    means = np.abs((signs * d).mean(axis=1))
    return float(np.mean(means >= abs(d.mean()) - 1e-12))


@pytest.mark.parametrize("n,rows,block", [(1, 5, 8), (3, 7, 24), (17, 101, 8 * 17 * 3), (40, 33, 8 * 40 * 7),
                                          (101, 9, 8 * 101 * 2), (5, 20_000, 4 * 2**20)])
def test_sign_rows_are_the_rows_of_one_choice_matrix(n, rows, block):
    """Blocks of any size (odd counts of signs leave half a word for the next block) give the
    patterns numpy's ``choice`` draws in one call."""
    want = np.random.default_rng(7).choice((1.0, -1.0), size=(rows, n))
    got = np.concatenate(list(sign_rows(n, rows, 7, block_bytes=block)))
    assert np.array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, -0.2, 0.0, 0.0, 0.1, 0.3, 1.0]), min_size=1, max_size=60),
       st.integers(0, 2**32 - 1))
def test_the_streamed_p_is_the_matrix_p_bit_for_bit(diffs, seed):
    assert randomization_p(diffs, seed=seed) == matrix_p(diffs, seed)


@pytest.mark.slow
@pytest.mark.parametrize("n", [17, 250, 1_000, MONTE_CARLO_LIMIT])
def test_the_streamed_p_is_the_matrix_p_up_to_the_monte_carlo_limit(n):
    rng = np.random.default_rng(n)
    d = rng.choice([-0.5, -0.1, 0.0, 0.0, 0.1, 0.2, 0.5], size=n) + (0.02 if n % 2 else 0.0)
    assert randomization_p(d) == matrix_p(d)


def test_past_the_limit_the_normal_part_agrees_with_the_flips():
    """Just past 5,000 samples the normal approximation of the flips' distribution gives, within the
    Monte Carlo's own error (4 standard errors of 20,000 flips), the p of 20,000 flips of the same
    differences, here label-metric-like differences (mostly ties, steps of 0.1, some 1s)."""
    rng = np.random.default_rng(3)
    n = MONTE_CARLO_LIMIT + 1
    for shift in (0.0, 0.004, 0.008, 0.012):
        d = rng.choice([-1.0, -0.3, -0.1, 0.0, 0.0, 0.0, 0.1, 0.3, 1.0], size=n)
        d[: int(shift * n)] = np.abs(d[: int(shift * n)]) + 0.1  # a drift up
        flips = sign_flip._random_share(d, abs(d.mean()), SEED)
        normal = randomization_p(d)
        error = math.sqrt(max(flips * (1 - flips), 1e-4) / PERMUTATIONS)
        assert abs(normal - flips) <= 4 * error, (shift, normal, flips)


def test_a_few_large_differences_among_many_ties_are_flipped_exactly():
    """500,000 samples, 5 of which differ: the p is the exact one over the 5 (2/2^5 when they all
    point one way), as if the ties were not there (a zero flips to itself)."""
    d = np.zeros(500_000)
    d[[3, 77, 1000, 4242, 499_999]] = [0.2, 0.5, 0.1, 1.0, 0.3]
    assert randomization_p(d) == pytest.approx(2 / 2**5) == pytest.approx(smallest_p(5))
    d[77] = -0.5
    assert randomization_p(d) == pytest.approx(matrix_p(d[d != 0]))


def test_one_dominant_difference_is_flipped_and_the_rest_taken_as_normal():
    """A difference of 1 among 10,000 of +-0.001 that cancel out: the sum is 1, and the p is
    P(|±1 + R| >= 1) with R ~ N(0, sum of the small squares), about 1/2 (half the time R pushes
    the sum past 1), which the plain normal approximation (p = erfc(|sum| / sqrt(2 sum d^2)) = 0.32)
    gets wrong."""
    small = np.tile([0.001, -0.001], 5_000)
    d = np.concatenate(([1.0], small))
    t, sigma = abs(d.sum()), math.sqrt(float(small @ small))
    q = lambda z: 0.5 * math.erfc(z / math.sqrt(2))  # noqa: E731  (the normal upper tail)
    want = 0.5 * (q((t - 1) / sigma) + q((t + 1) / sigma)) + 0.5 * (q((t + 1) / sigma) + q((t - 1) / sigma))
    assert randomization_p(d) == pytest.approx(want) == pytest.approx(0.5)
    assert math.erfc(t / math.sqrt(2 * float(d @ d))) == pytest.approx(0.32, abs=0.01)


def test_the_normal_approximation_is_the_textbook_formula():
    rng = np.random.default_rng(11)
    d = rng.normal(0.01, 0.3, size=200_000)
    assert randomization_p(d) == pytest.approx(math.erfc(abs(d.sum()) / math.sqrt(2 * float(d @ d))), rel=1e-9)


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_memory_stays_flat_over_a_grid_of_n():
    """What the test holds beside the differences does not grow with n: at most one block of sign
    patterns up to the Monte Carlo limit, a slice of the differences past it (the matrix it
    replaced held 20,000 x n floats: 160 KB a sample, 8 GB at 50,000)."""
    rng = np.random.default_rng(1)
    randomization_p(rng.normal(size=10))  # what a first call allocates once
    few = {n: rng.choice([-0.2, 0.0, 0.1, 0.3], size=n) for n in (1_000, 2_500, MONTE_CARLO_LIMIT)}
    many = {n: rng.uniform(-0.2, 0.25, size=n) for n in (10_000, 100_000, 1_000_000, 4_000_000)}  # none dominates
    flips = {n: _peak(lambda d=d: randomization_p(d)) for n, d in few.items()}
    normal = {n: _peak(lambda d=d: randomization_p(d)) for n, d in many.items()}
    assert max(flips.values()) < 4 * sign_flip.BLOCK_BYTES, flips
    assert max(normal.values()) < 8 * 8 * sign_flip.CHUNK, normal
    assert max(normal.values()) - min(normal.values()) < 8 * 8 * sign_flip.CHUNK, normal


def test_detectable_change_is_the_power_formula():
    """(z_{1 - alpha / 2m} + z_{0.8}) * sd / sqrt(n): with sd 0.2, n 400, alpha 0.05 over 5 metrics,
    z_0.995 = 2.5758, z_0.8 = 0.8416."""
    d = np.tile([0.2, -0.2], 200)
    sd = 0.2 * math.sqrt(400 / 399)
    assert spread(d) == pytest.approx(sd)
    assert detectable_change(spread(d), 400, 0.05, 5) == pytest.approx((2.5758293 + 0.8416212) * sd / 20, rel=1e-6)
    assert detectable_change(spread(d[:6]), 6, 0.05, 5) == math.inf  # 5 * 2/2^6 >= 0.05: nothing can be significant
    assert detectable_change(spread(d[:6]), 6, 0.05, 1) is not None  # 2/2^6 < 0.05: one metric can
    assert spread([0.1] * 50) is None and detectable_change(None, 50, 0.05) is None  # no spread: not told
    assert spread([0.1]) is None and spread([math.nan, 0.1]) is None
