"""compare / gate / correlate on constructed runs with known differences, and the pytest plugin."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from ragmeter.analysis.compare import SetupMismatch, compare_runs, holm, randomization_p
from ragmeter.analysis.correlate import correlate, spearman
from ragmeter.analysis.gate import gate
from ragmeter.core.summary import summarize_values
from ragmeter.runs import load_run


def make_run(path, values: dict[str, list], *, testset="t1", version=1, judge=None, status=None):
    """A run directory with the given per-query values (None = not computed)."""
    path.mkdir(parents=True)
    n = len(next(iter(values.values())))
    ids = [f"q{i}" for i in range(n)]
    results = [{"id": i, "metrics": {m: ({"status": "scored", "value": v[j]} if v[j] is not None else
                                         {"status": "not_computed", "value": None, "reason": "no label"})
                                     for m, v in values.items()}} for j, i in enumerate(ids)]
    summary = {m: summarize_values(m, [x for x in v if x is not None], [r["metrics"][m] for r in results]).as_dict()
               for m, v in values.items()}
    setup = {"status": "complete", "dataset": {"testset_fingerprint": testset},
             "metrics": {m: {"metric_name": m.split("@")[0], "metric_version": version, "params": {}, "k": 5,
                             "view": "retrieved", "judge": judge} for m in values}}
    (path / "setup.json").write_text(json.dumps(setup))
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    (path / "summary.json").write_text(json.dumps(summary))
    return load_run(path)


def test_randomization_p_matches_an_exact_count():
    # diffs (1, 1, 1): of 8 sign patterns only ++ + and - - - reach |mean| 1: p = 2/8
    assert randomization_p([1.0, 1.0, 1.0]) == 2 / 8
    assert randomization_p([0.0, 0.0]) == 1.0


def test_holm_matches_the_textbook_example():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_a_real_drop_on_200_queries_fails_the_gate(tmp_path):
    rng = np.random.default_rng(1)
    base = rng.uniform(0.3, 1.0, 200)
    new = np.clip(base - 0.1 + rng.normal(0, 0.05, 200), 0, 1)
    a = make_run(tmp_path / "a", {"ndcg@5": base.tolist()})
    b = make_run(tmp_path / "b", {"ndcg@5": new.tolist()})
    result = gate(b, a, max_drop=0.02)
    assert not result.passed and result.failures[0].startswith("ndcg@5 dropped 0.10")
    m = result.comparison.metrics[0]
    assert m.p_holm < 0.001 and m.ci95[1] < 0 and m.worsened > 150


def test_a_small_random_wobble_on_30_queries_passes(tmp_path):
    rng = np.random.default_rng(7)
    base = rng.uniform(0.2, 0.9, 30)
    noise = rng.normal(0, 0.15, 30)
    noise += -0.02 - noise.mean()  # a mean drop of exactly 0.02, all of it noise
    a = make_run(tmp_path / "a", {"recall@5": base.tolist()})
    b = make_run(tmp_path / "b", {"recall@5": (base + noise).tolist()})
    result = gate(b, a, max_drop=0.01)
    m = result.comparison.metrics[0]
    assert m.diff == pytest.approx(-0.02) and m.p_holm > 0.05 and result.passed


def test_floors_and_coverage(tmp_path):
    a = make_run(tmp_path / "a", {"recall@5": [0.5, 0.6, 0.7, 0.8]})
    b = make_run(tmp_path / "b", {"recall@5": [0.5, 0.6, 0.7, None]})
    result = gate(b, a, floors={"recall@5": 0.9})
    assert not result.passed
    assert any("coverage fell: 1 more samples" in f for f in result.failures)
    assert any("below its floor 0.9" in f for f in result.failures)


def test_setup_mismatch_is_refused_and_named(tmp_path):
    a = make_run(tmp_path / "a", {"ndcg@5": [0.5, 0.6]}, judge={"model": "x"})
    b = make_run(tmp_path / "b", {"ndcg@5": [0.5, 0.6]}, version=2, testset="t2", judge={"model": "y"})
    with pytest.raises(SetupMismatch) as info:
        compare_runs(a, b)
    text = str(info.value)
    assert "test set" in text and "ndcg@5: metric_version 1 vs 2" in text and "judge" in text
    cmp = compare_runs(a, b, allow_setup_change=True)
    assert cmp.differences and cmp.metrics[0].diff == 0


def test_queries_in_one_run_only_are_reported(tmp_path):
    a = make_run(tmp_path / "a", {"ndcg@5": [0.5, 0.6, 0.7]})
    b = make_run(tmp_path / "b", {"ndcg@5": [0.5, 0.6]})
    cmp = compare_runs(a, b)
    assert cmp.only_a == ["q2"] and cmp.metrics[0].n == 2


def test_gate_cli_exit_codes(cli, tmp_path):
    a = make_run(tmp_path / "a", {"ndcg@5": [0.9] * 40})
    b = make_run(tmp_path / "b", {"ndcg@5": [0.5] * 40})
    c = make_run(tmp_path / "c", {"ndcg@5": [0.9] * 40}, version=2)
    assert cli("gate", a.path, "--baseline", a.path).exit_code == 0
    failed = cli("gate", b.path, "--baseline", a.path, "--format", "markdown")
    assert failed.exit_code == 1 and "**ragmeter gate: failed**" in failed.stdout and "| ndcg@5 |" in failed.stdout
    assert cli("gate", c.path, "--baseline", a.path).exit_code == 2
    assert cli("gate", a.path, "--baseline", a.path, "--min", "oops").exit_code == 2
    # another k: no measure in common, so nothing would be gated; it passed (exit 0), now refused
    k3 = make_run(tmp_path / "k3", {"ndcg@3": [0.1] * 40})
    refused = cli("gate", k3.path, "--baseline", a.path)
    assert refused.exit_code == 2
    assert "measures: none in common (A holds ndcg@5; B holds ndcg@3)" in refused.output
    doc = json.loads(cli("gate", b.path, "--baseline", a.path, "--format", "json").stdout)
    assert doc["passed"] is False


def test_compare_cli(cli, tmp_path):
    a = make_run(tmp_path / "a", {"ndcg@5": [0.2, 0.4, 0.6, 0.8]})
    b = make_run(tmp_path / "b", {"ndcg@5": [0.3, 0.5, 0.6, 0.9]})
    out = cli("compare", a.path, b.path).stdout
    assert "ndcg@5" in out and "+0.075" in out and "3/0/1" in out


@pytest.mark.parametrize("x,y", [([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]), ([1, 1, 2, 2, 3], [3, 1, 2, 2, 9]),
                                 ([0.1, 0.5, 0.5, 0.9, 0.2, 0.3], [0.3, 0.2, 0.8, 0.8, 0.1, 0.5])])
def test_spearman_matches_scipy(x, y):
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)


def test_correlate_flags_diverging_expected_pairs(tmp_path):
    run = make_run(tmp_path / "a", {"precision@5": [0.2, 0.4, 0.6, 0.8, 1.0], "ndcg@5": [1.0, 0.8, 0.6, 0.4, 0.3],
                                    "recall@5": [0.1, 0.2, 0.3, 0.4, 0.5]})
    pairs = {(p.a, p.b): p for p in correlate(run)}
    assert pairs[("precision@5", "ndcg@5")].diverges and pairs[("precision@5", "ndcg@5")].rho == pytest.approx(-1)
    assert not pairs[("precision@5", "recall@5")].diverges and pairs[("precision@5", "recall@5")].expected is None


PLUGIN_TEST = """
def test_good(assert_metrics):
    assert_metrics(DATA, {"hit_rate@5": 0.8})

def test_bad(assert_metrics):
    assert_metrics(DATA, {"recall@5": 0.9, "ndcg@5": 0.5})
"""


def test_pytest_plugin(pytester, warranty):
    pytester.makepyfile(f"DATA = {str(warranty / 'dataset.jsonl')!r}\n" + PLUGIN_TEST)
    result = pytester.runpytest()  # the plugin loads through its pytest11 entry point
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*recall@5: mean 0.778 < 0.9*", "*q5 * 0.000*", "*q1 * 0.667*"])
