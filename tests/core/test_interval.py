"""A measure's interval (core/interval.py): the bootstrap's numbers unchanged below the switch
and for measures of few distinct values; past it, the normal approximation with its skewness
term, which agrees with the bootstrap near the switch to within a stated fraction of a standard
error, and is named in the provenance (in memory, saved, and streamed alike)."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from ragmeter import evaluate
from ragmeter.core import interval
from ragmeter.core.bootstrap import METHOD, bootstrap_ci
from ragmeter.core.interval import (
    APPROXIMATE_BEYOND,
    APPROXIMATE_FROM,
    APPROXIMATE_METHOD,
    bootstrap_draws,
    mean_interval,
    normal_interval,
)
from ragmeter.core.sample import Chunk, Sample

#: How far the approximation may sit from the bootstrap's endpoint, in standard errors (s / sqrt(n)):
#: the bootstrap's own Monte Carlo error at the 2.5th percentile of 2,000 resamples is about 0.06.
TOLERANCE = 0.25


def ndcg_like(n: int, seed: int) -> np.ndarray:
    """Half zeros, a few frequent values, the rest continuous (as nDCG@10 of label_bench's data)."""
    rng = np.random.default_rng(seed)
    zeros = np.zeros(n // 2)
    common = rng.choice([1.0, 0.5, 0.6309297535714575, 0.43067655807339306], n // 8)
    rest = np.round(rng.beta(2, 5, n - len(zeros) - len(common)), 6)
    return np.sort(np.concatenate([zeros, common, rest]))


NEAR_SWITCH = {
    "ndcg-like": ndcg_like(APPROXIMATE_FROM, 1),
    "uniform": np.sort(np.random.default_rng(2).random(APPROXIMATE_FROM)),
    "lognormal": np.sort(np.random.default_rng(3).lognormal(0, 1, APPROXIMATE_FROM)),  # skewness about 6
}


@pytest.mark.parametrize("name", list(NEAR_SWITCH))
def test_near_the_switch_the_approximation_agrees_with_the_bootstrap(name: str) -> None:
    x = NEAR_SWITCH[name]
    assert bootstrap_draws(x) > APPROXIMATE_BEYOND  # a sample the switch sends to the approximation
    se = x.std() / math.sqrt(len(x))
    boot, approx = bootstrap_ci(x), normal_interval(x)
    assert boot is not None and approx is not None
    assert abs(approx[0] - boot[0]) <= TOLERANCE * se and abs(approx[1] - boot[1]) <= TOLERANCE * se


def test_the_agreement_check_can_fail() -> None:
    """An interval a third of a standard error off (a mistake in the scale, 1.96 read as 2.6) fails it."""
    x = NEAR_SWITCH["uniform"]
    se = x.std() / math.sqrt(len(x))
    lo, hi = bootstrap_ci(x)  # type: ignore[misc]
    wrong = x.mean() - 2.6 * se
    assert abs(wrong - lo) > TOLERANCE * se


def test_the_skewness_term_follows_the_bootstraps_quantiles() -> None:
    """At small n the skewness term is visible: on exponential values (skewness about 2) the
    expansion's endpoints lie within 0.04 standard errors of the quantiles of 400,000 resample
    means, closer than the plain normal interval's (off by about 0.13 at n = 40)."""
    x = np.sort(np.random.default_rng(7).exponential(1.0, 40))
    n = len(x)
    rng = np.random.default_rng(8)
    means = np.concatenate([np.take(x, rng.integers(0, n, size=(50_000, n))).mean(axis=1) for _ in range(8)])
    want = np.quantile(means, [0.025, 0.975])
    se = x.std() / math.sqrt(n)
    got = np.array(normal_interval(x))
    plain = x.mean() + np.array([-1, 1]) * interval.Z_975 * se
    assert np.abs(got - want).max() < 0.04 * se
    assert np.abs(plain - want).max() > 2 * np.abs(got - want).max()


def test_below_the_switch_or_with_few_values_the_bootstrap_is_kept_bit_for_bit() -> None:
    small = ndcg_like(APPROXIMATE_FROM - 1, 4)
    assert mean_interval(small) == (bootstrap_ci(small), METHOD)
    few = np.sort(np.random.default_rng(5).integers(0, 11, 60_000) / 10)  # precision@10-like: 11 counts a resample
    assert bootstrap_draws(few) == 11
    assert mean_interval(few) == (bootstrap_ci(few), METHOD)
    many = ndcg_like(APPROXIMATE_FROM, 6)
    assert mean_interval(many) == (normal_interval(many), APPROXIMATE_METHOD)


def test_bootstrap_draws_counts_a_count_per_frequent_value_and_a_draw_per_rare_one() -> None:
    x = np.sort(np.array([0.0] * 8 + [1.0] * 7 + [0.5, 0.25]))  # 0 is frequent (8 times), the rest pooled
    assert bootstrap_draws(x) == 1 + 7 + 2
    assert bootstrap_draws(np.array([])) == 0


def test_degenerate_inputs() -> None:
    assert normal_interval([]) is None
    assert normal_interval([0.3]) == (0.3, 0.3)
    assert normal_interval([0.25] * 50_000) == (0.25, 0.25)
    assert mean_interval([]) == (None, METHOD)


def test_other_levels_use_their_quantile() -> None:
    x = NEAR_SWITCH["uniform"]
    lo95, hi95 = normal_interval(x)  # type: ignore[misc]
    lo90, hi90 = normal_interval(x, level=0.90)  # type: ignore[misc]
    assert lo95 < lo90 < hi90 < hi95
    se = x.std() / math.sqrt(len(x))
    assert (hi90 - lo90) / se == pytest.approx(2 * 1.6448536269514722, rel=1e-3)


def _samples(n: int, seed: int) -> list[Sample]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        ranked = tuple(Chunk(f"c{c}") for c in rnd.sample(range(60), 10))
        labels = {f"c{c}": float(rnd.choice([1, 2, 3])) for c in rnd.sample(range(60), rnd.randint(1, 5))}
        out.append(Sample(f"q{i}", retrieved=ranked, relevance=labels))
    return out


def test_the_method_used_is_named_in_the_provenance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interval, "APPROXIMATE_FROM", 100)
    monkeypatch.setattr(interval, "APPROXIMATE_BEYOND", 50)
    doc = evaluate(_samples(400, 1), ["ndcg@10", "hit_rate@10"]).to_dict(samples=False)
    ndcg, hit = doc["metrics"]["ndcg@10"], doc["metrics"]["hit_rate@10"]
    assert ndcg["provenance"]["interval"] == APPROXIMATE_METHOD  # many distinct values
    assert hit["provenance"]["interval"] == METHOD  # two values: two counts a resample
    values = np.sort([s["metrics"]["ndcg@10"]["value"]
                      for s in evaluate(_samples(400, 1), ["ndcg@10"]).to_dict()["samples"]])
    assert tuple(ndcg["ci95"]) == normal_interval(values)


def test_a_streamed_run_names_it_as_the_in_memory_run_does(cli, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interval, "APPROXIMATE_FROM", 100)
    monkeypatch.setattr(interval, "APPROXIMATE_BEYOND", 50)
    path = tmp_path / "d.jsonl"
    with open(path, "w") as f:
        for s in _samples(400, 2):
            f.write(json.dumps({"id": s.id, "retrieved": list(s.retrieved_ids), "relevant": dict(s.relevance)}) + "\n")
    from ragmeter.runs import list_runs

    for where, extra in (("whole", ()), ("stream", ("--block", 64))):
        out = cli("eval", path, "--metrics", "ndcg@10,hit_rate@10", "--runs-dir", tmp_path / where, *extra)
        assert out.exit_code == 0, out.output
    (a,), (b,) = list_runs(tmp_path / "whole"), list_runs(tmp_path / "stream")
    assert a.summary == b.summary
    assert a.setup["metrics"]["ndcg@10"]["interval"] == b.setup["metrics"]["ndcg@10"]["interval"] == APPROXIMATE_METHOD
    assert a.setup["metrics"]["hit_rate@10"]["interval"] == METHOD
