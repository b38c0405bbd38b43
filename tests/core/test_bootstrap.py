"""Bootstrap v2 (core/bootstrap.py): counts for the frequent values, uniform draws among the
rest. The same distribution as n uniform indices into the values (checked against that
bootstrap's resample means, fixed seeds), the draws of version 1 where every value is frequent
or none is, the same means at any batch size, and exact intervals on degenerate inputs."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ragmeter import evaluate
from ragmeter.core import bootstrap
from ragmeter.core.bootstrap import METHOD, bootstrap_ci, quantiles, resample_means
from ragmeter.core.sample import Chunk, Sample
from ragmeter.core.summary import summarize_values

RNG = np.random.default_rng(21)
# nDCG-like: two values seen thousands of times, the rest (2,000 of them) once or a few times
MIXED = np.sort(np.concatenate([np.zeros(3000), np.ones(1500), np.round(RNG.random(2000), 3)]))


def all_means(x: np.ndarray, **kw) -> np.ndarray:
    return np.concatenate(list(resample_means(x, **kw)))


def index_means(x: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The textbook bootstrap: n uniform indices into the values per resample."""
    rng = np.random.default_rng(seed)
    return np.take(x, rng.integers(0, len(x), size=(resamples, len(x)))).sum(axis=1) / len(x)


def version_1(x: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Version 1's draws: counts over every value when K * 32 < n, else n indices."""
    n = len(x)
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(x, return_counts=True)
    if len(distinct) * 32 < n:
        terms = rng.multinomial(n, counts / n, size=resamples) * distinct[None, :]
    else:
        terms = np.take(x, rng.integers(0, n, size=(resamples, n), dtype=np.uint32))
    return terms.sum(axis=1) / n


@pytest.mark.slow
def test_the_pooled_bootstrap_has_the_index_bootstraps_distribution() -> None:
    ours = all_means(MIXED, resamples=20_000, seed=5)
    theirs = index_means(MIXED, 20_000, 6)
    se = MIXED.std() / math.sqrt(len(MIXED))
    assert abs(ours.mean() - MIXED.mean()) < 0.05 * se and ours.std() == pytest.approx(se, rel=0.03)
    for q in (0.025, 0.25, 0.5, 0.75, 0.975):  # within sampling error of 20,000 resamples each
        assert abs(np.quantile(ours, q) - np.quantile(theirs, q)) < 0.1 * se, q
    assert stats.ks_2samp(ours, theirs).pvalue > 0.001


@pytest.mark.slow
def test_the_distribution_check_can_fail() -> None:
    """The comparison above catches a pool drawn wrongly: draws that never reach the pool's
    largest tenth (drawing its smallest tenth twice instead) move the distribution past it."""
    pool = MIXED[(MIXED > 0) & (MIXED < 1)]
    tenth = len(pool) // 10
    wrong = np.sort(np.concatenate([np.zeros(3000), np.ones(1500), pool[:-tenth], pool[:tenth]]))
    assert stats.ks_2samp(all_means(wrong, resamples=20_000, seed=5), index_means(MIXED, 20_000, 6)).pvalue < 0.001


@pytest.mark.parametrize("batch", [1, 7, 333, 1999, None])
def test_pooled_means_are_the_same_at_any_batch_size(batch: int | None) -> None:
    assert np.array_equal(all_means(MIXED, seed=9, batch=batch), all_means(MIXED, seed=9, batch=2000))


@pytest.mark.parametrize("values", [np.sort(RNG.integers(0, 11, 5000) / 10),  # every value frequent
                                    np.sort(RNG.random(3000)),  # none is
                                    np.array([0.0, 1.0, 1.0])], ids=["frequent", "rare", "three"])
def test_where_every_value_is_frequent_or_none_the_draws_are_version_1s(values: np.ndarray) -> None:
    assert np.array_equal(all_means(values, resamples=500, seed=11), version_1(values, 500, 11))


def test_degenerate_inputs_give_exact_intervals() -> None:
    assert bootstrap_ci([]) is None
    assert bootstrap_ci([0.25]) == (0.25, 0.25)
    assert bootstrap_ci([0.7] * 1000) == (0.7, 0.7)  # one frequent value: every resample's mean is it
    lo, hi = bootstrap_ci([0.0] * 100 + [1.0])  # one frequent value and one rare one (the pool)
    assert lo == 0.0  # (100/101)^101 of the resamples draw the rare value 0 times: over 2.5%
    k = round(hi * 101)
    assert hi == k / 101 and 1 <= k <= 5  # a whole number of draws of it, over 101


def test_pooled_memory_is_bounded_by_the_batch_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bootstrap, "BATCH_BYTES", 2**20)
    values = np.sort(np.concatenate([np.zeros(100_000), np.round(np.random.default_rng(3).random(100_000), 4)]))
    tracemalloc.start()
    try:
        bootstrap_ci(values, resamples=50)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # np.unique's sort and inverse, the pool (about n values), one batch: not 50 x 200,000 draws (80 MB)
    assert peak < 2**20 + 8 * 8 * len(values)


@pytest.mark.slow
@given(values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=300),
       q=st.lists(st.floats(0, 1), min_size=1, max_size=4))
@settings(max_examples=300, deadline=None)
def test_quantiles_are_numpys_bit_for_bit(values: list[float], q: list[float]) -> None:
    x = np.array(values)
    assert np.array_equal(quantiles(x, q), np.quantile(x, q))


def test_the_method_is_named_in_every_measures_provenance() -> None:
    r = evaluate([Sample("q1", retrieved=(Chunk("a"),), relevance={"a": 1.0})], ["mrr@5", "ndcg@5"])
    assert {m["provenance"]["interval"] for m in r.to_dict()["metrics"].values()} == {METHOD}
    assert METHOD.startswith("percentile bootstrap v2")


FEW_DISTINCT = np.sort(np.random.default_rng(3).integers(0, 11, 5000) / 10)  # P@10-like: multinomial path


MANY_DISTINCT = np.sort(np.random.default_rng(4).random(3000))  # nDCG-like: index path


@pytest.mark.slow
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


def reference_means(x: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The bootstrap as first written: every resample drawn at once, on one thread."""
    n = len(x)
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(x, return_counts=True)
    if len(distinct) * bootstrap.MULTINOMIAL_COST < n:
        terms = rng.multinomial(n, counts / n, size=resamples) * distinct[None, :]
    else:
        terms = np.take(x, rng.integers(0, n, size=(resamples, n), dtype=np.uint32))
    return terms.sum(axis=1) / n


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
@pytest.mark.parametrize("n", [2, 7, 300, 4000])
@pytest.mark.parametrize("batch", [None, 1, 3, 64, 5000])
def test_batched_threaded_draws_are_the_draws_of_one_batch(n: int, batch: int | None) -> None:
    rng = np.random.default_rng(n)
    for x in (np.sort(rng.random(n)), np.sort(rng.integers(0, 3, n) / 2.0)):
        expected = reference_means(x, 500, 11)
        got = np.concatenate(list(bootstrap.resample_means(x, resamples=500, seed=11, batch=batch)))
        assert np.array_equal(got, expected)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
def test_default_batches_are_many_and_still_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the default batch size a 20,000-value bootstrap takes many batches (the threaded
    path) and gives what one batch gives."""
    x = np.sort(np.random.default_rng(5).random(20_000))
    assert bootstrap.BATCH_BYTES // (16 * len(x)) < bootstrap.RESAMPLES
    expected = reference_means(x, bootstrap.RESAMPLES, bootstrap.SEED)
    lo, hi = np.quantile(expected, [0.025, 0.975])
    assert bootstrap.bootstrap_ci(x) == (float(lo), float(hi))


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
@pytest.mark.parametrize("n", [2, 3, 1000, 4000, 2**31 + 1, 3 * 2**30 + 7, 2**32 - 1, 2**32, 2**33 + 5])
def test_uniform_indices_are_numpys_integers(n: int) -> None:
    """The same draws as ``Generator.integers(0, n, dtype=np.uint32)`` call by call, also where
    about half the 32-bit draws are rejected (n just over 2**31) and past 2**32 (int64)."""
    counts = [1, 7, 0, 1000, 3, 4096, 5]
    dtype = np.uint32 if n < 2**32 else np.int64
    reference = np.random.default_rng(n)
    expected = [reference.integers(0, n, size=c, dtype=dtype) for c in counts]
    got = list(bootstrap.uniform_indices(np.random.default_rng(n), n, counts))
    assert [g.dtype for g in got] == [e.dtype for e in expected]
    assert all(np.array_equal(g, e) for g, e in zip(got, expected))


def test_bootstrap_interval_is_seeded_and_order_free():
    values = [0.1, 0.9, 0.5, 0.7, 0.3, 1.0, 0.0]
    a = bootstrap_ci(values)
    assert a == bootstrap_ci(values) and a[0] < sum(values) / len(values) < a[1]
    from ragmeter.core.summary import summarize_values
    assert summarize_values("m", values, []).ci95 == summarize_values("m", values[::-1], []).ci95
