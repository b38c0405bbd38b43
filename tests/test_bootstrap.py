"""The bootstrap interval in bounded memory: the same numbers for a seed at any batch size,
on both ways of drawing a resample, and an exact bootstrap on each."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from ragmeter.core import bootstrap
from ragmeter.core.bootstrap import bootstrap_ci, resample_means
from ragmeter.core.summary import summarize_values

FEW_DISTINCT = np.sort(np.random.default_rng(3).integers(0, 11, 5000) / 10)  # P@10-like: multinomial path
MANY_DISTINCT = np.sort(np.random.default_rng(4).random(3000))  # nDCG-like: index path


@pytest.mark.parametrize("values", [FEW_DISTINCT, MANY_DISTINCT, np.array([0.0, 1.0, 1.0])],
                         ids=["few", "many", "three"])
@pytest.mark.parametrize("seed", [1, bootstrap.SEED])
def test_interval_is_the_same_at_any_batch_size(values, seed):
    whole = bootstrap_ci(values, seed=seed, batch=bootstrap.RESAMPLES)
    for batch in (1, 7, 333, 1999, None):
        assert bootstrap_ci(values, seed=seed, batch=batch) == whole
    means = [np.concatenate(list(resample_means(values, seed=seed, batch=b))) for b in (1, 64, 2000)]
    assert all(np.array_equal(means[0], m) for m in means[1:])  # every resample, not just the quantiles


def test_a_different_seed_draws_different_resamples():
    assert bootstrap_ci(MANY_DISTINCT, seed=1) != bootstrap_ci(MANY_DISTINCT, seed=2)
    assert bootstrap_ci(FEW_DISTINCT, seed=1) != bootstrap_ci(FEW_DISTINCT, seed=2)


@pytest.mark.parametrize("values", [np.sort(np.random.default_rng(5).integers(0, 2, 4000).astype(float)),
                                    np.sort(np.random.default_rng(6).random(4000))], ids=["binary", "continuous"])
def test_both_draws_are_a_bootstrap_of_the_mean(values):
    """Resample means centre on the mean with the standard error s / sqrt(n) (CLT), on either path."""
    means = np.concatenate(list(resample_means(values, resamples=4000)))
    se = values.std() / math.sqrt(len(values))
    assert abs(means.mean() - values.mean()) < 0.1 * se
    assert means.std() == pytest.approx(se, rel=0.05)
    lo, hi = bootstrap_ci(values)
    assert lo == pytest.approx(values.mean() - 1.96 * se, abs=0.15 * se)
    assert hi == pytest.approx(values.mean() + 1.96 * se, abs=0.15 * se)


def test_memory_is_bounded_by_the_batch_budget(monkeypatch):
    monkeypatch.setattr(bootstrap, "BATCH_BYTES", 4 * 2**20)
    values = np.sort(np.random.default_rng(7).random(200_000))  # all at once: 2000 x 200,000 draws = 3.2 GB
    tracemalloc.start()
    try:
        bootstrap_ci(values, resamples=50)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # one batch, plus a few arrays of n (np.unique's sort, distinct values, counts, p); 50 resamples
    # at once would be 50 x 200,000 x 12 bytes = 120 MB
    assert peak < 4 * 2**20 + 8 * 8 * len(values)


def test_summary_interval_does_not_depend_on_sample_order():
    values = list(np.random.default_rng(8).random(500))
    assert summarize_values("m", values, []).ci95 == summarize_values("m", values[::-1], []).ci95
