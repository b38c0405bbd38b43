"""The gate: a gate that cannot fail says so (with n paired samples the sign-flip test's smallest
p is 2 / 2^n, and Holm over m metrics multiplies it by m; with 6 samples and 5 metrics no change
can be significant: a -0.125 MRR drop passed with --max-drop 0 and nothing said why), and a gate
never passes on NaN, even on runs built in Python (past the run reader)."""

from __future__ import annotations

import json
import math
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from ragmeter.analysis.compare import holm, randomization_p, samples_needed, smallest_p
from ragmeter.analysis.gate import gate, markdown, text
from ragmeter.core.errors import InvalidInputError
from ragmeter.runs.store import Run
from tests.analysis.test_compare import make_run

METRICS = ("precision@5", "recall@5", "hit_rate@5", "reciprocal_rank@5", "ndcg@5")


def _runs(tmp_path, n: int):
    base = {m: [1.0] * n for m in METRICS}
    new = {m: [1.0] * n for m in METRICS}
    new["reciprocal_rank@5"] = [0.5] * 2 + [1.0] * (n - 2) if n == 6 else [0.5] * n  # -0.167 at n=6
    return make_run(tmp_path / "new", new), make_run(tmp_path / "base", base)


def test_six_samples_and_five_metrics_cannot_fail_and_the_gate_says_so(tmp_path):
    run, base = _runs(tmp_path, 6)
    result = gate(run, base, max_drop=0.0, significant_only=True)
    assert result.passed  # the test cannot reject: that is what must be said
    (note,) = result.cannot_fail
    assert note.startswith("the comparison cannot fail at this n: with at most 2 paired sample(s) that differ, "
                           "the sign-flip test's smallest p is 0.5000, and Holm over 5 metric(s) makes it 1.0000")
    assert note.endswith("It needs at least 8 samples that differ (or fewer metrics with -m, or bars: --min/--max)")
    shown = text(result, max_drop=0.0)
    assert shown.splitlines()[:2] == ["gate passed", f"  NOTE: {note}"]
    assert f"- **note**: {note}" in markdown(result)
    assert result.as_dict()["cannot_fail"] == [note]


def test_six_samples_fail_the_plain_gate_on_the_size_of_the_drop_and_it_says_it_is_not_significant(tmp_path):
    """The seed's should_deploy: a drop of the mean past the threshold fails, whatever its p; the
    verdict says the drop is not significant, the note that the test cannot reject at this n, and
    the power line that no drop could be."""
    run, base = _runs(tmp_path, 6)
    result = gate(run, base, max_drop=0.0)
    assert not result.passed and not result.significant_only
    (failure,) = result.failures
    assert failure.startswith("reciprocal_rank@5 dropped 0.167 (1.000 -> 0.833), more than the allowed 0.0; "
                              "not significant at n=6 (p=1.0000 after Holm, 95% CI [")
    (note,) = result.cannot_fail
    assert note.startswith("the significance test cannot reject at this n: with at most 2 paired sample(s) that "
                           "differ") and "a drop past --max-drop fails the gate all the same" in note
    shown = text(result, max_drop=0.0)
    assert shown.splitlines()[:2] == ["gate failed:", f"  {failure}"]
    assert ("  power: none at n=6: no drop, however large, can be significant at alpha 0.05 over 5 metric(s) "
            "(even with all 6 samples differing the smallest p, 2/2^6 = 0.0312, times 5 is not below it)") \
        in shown.splitlines()
    assert "1 drop(s) larger than 0.0 fail the gate without being significant at 0.05 after Holm" in shown
    assert result.as_dict()["mode"] == "max-drop" and result.as_dict()["power"]["reciprocal_rank@5"] is None
    assert gate(run, base, max_drop=0.17).passed  # 0.167 is within 0.17
    assert not gate(run, base, max_drop=0.16).passed


def test_the_plain_gate_fails_exactly_where_should_deploy_does(tmp_path):
    """The metric reference's gate, on each metric's mean: delta = baseline - new; FAIL when
    delta > threshold (strictly), for every threshold and change."""
    def should_deploy(new: dict, baseline: dict, threshold: float) -> bool:  # the seed's, as written there
        for metric_name, baseline_value in baseline.items():
            delta = baseline_value - new[metric_name]
            if delta > threshold:
                return False
        return True

    a = make_run(tmp_path / "a", {"ndcg@5": [0.5, 0.75, 1.0, 0.25], "recall@5": [0.5] * 4})
    for i, (shift, threshold) in enumerate([(-0.25, 0.02), (-0.0625, 0.0625), (-0.125, 0.0625), (0.25, 0.0),
                                            (0.0, 0.0), (-0.015625, 0.0)]):
        values = {"ndcg@5": [x + shift for x in (0.5, 0.75, 1.0, 0.25)], "recall@5": [0.5] * 4}
        b = make_run(tmp_path / f"b{i}", values)
        means = {m: sum(v) / 4 for m, v in values.items()}
        assert gate(b, a, max_drop=threshold).passed == should_deploy(means, {"ndcg@5": 0.625, "recall@5": 0.5},
                                                                      threshold), (shift, threshold)


def test_at_the_needed_n_the_same_drop_fails(tmp_path):
    run, base = _runs(tmp_path, samples_needed(5, 0.05))
    result = gate(run, base, max_drop=0.0)
    assert not result.passed and result.failures[0].startswith("reciprocal_rank@5 dropped 0.500")
    assert result.cannot_fail == []


def test_one_metric_that_cannot_be_significant_is_named(tmp_path):
    base = make_run(tmp_path / "b", {"mrr@5": [1.0] * 10, "ndcg@5": [1.0] * 10})
    run = make_run(tmp_path / "a", {"mrr@5": [0.5] * 10, "ndcg@5": [0.9] * 2 + [1.0] * 8})
    (note,) = gate(run, base, max_drop=0.0).cannot_fail
    assert note.startswith("ndcg@5 cannot be significant at this n: 2 paired sample(s) differ, so its smallest p "
                           "is 0.5000")


@pytest.mark.parametrize("n", range(1, 11))
def test_smallest_p_is_what_the_test_reaches(n):
    """The bound is exact: every diff one way reaches it, and no sign pattern goes lower."""
    assert randomization_p([0.1] * n) == pytest.approx(smallest_p(n))
    if n <= 6:
        assert min(randomization_p(list(d)) for d in product((-0.2, 0.1, 0.3), repeat=n)) >= smallest_p(n) - 1e-12


def test_samples_needed_is_the_first_n_where_holm_can_reject():
    for m, alpha in ((1, 0.05), (5, 0.05), (5, 0.01), (12, 0.05)):
        n = samples_needed(m, alpha)
        assert min(holm([smallest_p(n)] * m)) < alpha <= min(holm([smallest_p(n - 1)] * m))


def _run(name: str, values: list[float], mean: float) -> Run:
    results = [{"id": f"q{i}", "metrics": {"ndcg@5": {"status": "scored", "value": v}}} for i, v in enumerate(values)]
    summary = {"ndcg@5": {"mean": mean, "ci95": None, "scored": len(values), "not_computed": 0, "failed": 0}}
    setup = {"status": "complete", "dataset": {"testset_fingerprint": "t"},
             "metrics": {"ndcg@5": {"metric_name": "ndcg", "metric_version": 1, "params": {}, "k": 5,
                                    "view": "retrieved", "judge": None}}}
    return Run(Path(name), setup, results, summary)


def test_nan_values_fail_the_gate_instead_of_passing():
    base = _run("base", [0.2] * 30, 0.2)
    new = _run("new", [math.nan] + [0.2] * 29, math.nan)
    result = gate(new, base, max_drop=0.02)
    assert not result.passed
    assert any("not a number" in f or "not a finite number" in f for f in result.failures), result.failures


def test_a_nan_mean_fails_a_floor_and_a_ceiling():
    new = _run("new", [0.5] * 5, math.nan)
    assert not gate(new, floors={"ndcg@5": 0.1}).passed
    failures = gate(new, floors={"ndcg@5": 0.1}).failures
    assert failures == ["ndcg@5: the run's mean is not a finite number (nan)"]


def test_an_interrupted_run_is_refused_by_the_gate():
    base = _run("base", [0.2] * 5, 0.2)
    new = _run("new", [0.2] * 5, 0.2)
    new.setup["status"] = "interrupted"
    with pytest.raises(InvalidInputError, match="not complete"):
        gate(new, base)


def test_gate_checks_floors_and_ceilings_without_a_baseline(cli, tmp_path):
    from tests.analysis.test_compare import make_run

    run = make_run(tmp_path / "r", {"recall@5": [0.5, 1.0, 1.0, 0.5], "contradiction_rate": [0.0, 0.0, 0.5, 0.0]})
    ok = cli("gate", run.path, "--min", "recall@5=0.7", "--max", "contradiction_rate=0.2")
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.splitlines()[0] == "gate passed"
    assert "recall@5 0.750 >= 0.700 ok" in ok.stdout and "contradiction_rate 0.125 <= 0.200 ok" in ok.stdout
    assert "no baseline" in ok.stdout
    missed = cli("gate", run.path, "--min", "recall@5=0.8")
    assert missed.exit_code == 1 and "recall@5 0.750 is below its floor 0.8" in missed.stdout
    doc = json.loads(cli("gate", run.path, "--min", "recall@5=0.8", "--format", "json").stdout)
    assert doc["passed"] is False and doc["comparison"] is None and doc["checks"] == ["recall@5 0.750 >= 0.800 FAILED"]
    md = cli("gate", run.path, "--min", "recall@5=0.7", "--format", "markdown")
    assert md.exit_code == 0 and "**ragmeter gate: passed**" in md.stdout and "| metric |" not in md.stdout
    nothing = cli("gate", run.path)  # neither a baseline nor a bar: a usage error
    assert nothing.exit_code == 2 and "--baseline" in nothing.output and "--min" in nothing.output
    assert cli("gate", run.path, "--min", "recall@5=0.7", "-m", "recall@5").exit_code == 2
    assert cli("gate", run.path, "--min", "oops").exit_code == 2


def test_gate_text_gives_the_numbers_and_says_not_significant(cli, tmp_path):
    """The issue's case: nDCG fell from 0.794 to 0.628 on 6 queries; nothing is significant."""
    base = [1.0, 1.0, 0.387, 1.0, 0.5, 0.877]
    new = [0.498, 1.0, 0.387, 1.0, 0.0, 0.885]
    a = make_run(tmp_path / "a", {"ndcg@5": base, "mrr@5": [1.0] * 6})
    b = make_run(tmp_path / "b", {"ndcg@5": new, "hit_rate@5": [1.0] * 6})
    out = cli("gate", b.path, "--baseline", a.path, "--significant-only", "-m", "ndcg@5")
    assert out.exit_code == 0, out.output
    mean_a, mean_b = sum(base) / 6, sum(new) / 6
    assert f"ndcg@5: {mean_a:.3f} -> {mean_b:.3f} ({mean_b - mean_a:+.3f}, n=6), not significant" in out.stdout
    (line,) = [x for x in out.stdout.splitlines() if x.strip().startswith("ndcg@5:")]
    assert line.count("n=6") == 1, line  # n is said once, beside the change
    assert "fails the gate only when it is significant" in out.stdout
    # the new-user trial: a run that lost a metric the baseline held passed the gate
    lost = cli("gate", b.path, "--baseline", a.path, "--significant-only")
    assert lost.exit_code == 1, lost.output
    assert ("mrr@5: the baseline holds it, the run does not (score it in the run, or name the metrics to gate "
            "with -m)") in lost.stdout and "not gated, new in the run: hit_rate@5" in lost.stdout
    plain = cli("gate", b.path, "--baseline", a.path, "-m", "ndcg@5")  # the same drop, past the default 0.02: fails
    assert plain.exit_code == 1, plain.output
    assert plain.stdout.splitlines()[1].startswith(f"  ndcg@5 dropped {mean_a - mean_b:.3f} ({mean_a:.3f} -> "
                                                   f"{mean_b:.3f}), more than the allowed 0.02; not significant at n=6")




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
    result = gate(b, a, max_drop=0.01, significant_only=True)
    m = result.comparison.metrics[0]
    assert m.diff == pytest.approx(-0.02) and m.p_holm > 0.05 and result.passed
    plain = gate(b, a, max_drop=0.01)  # past the allowance, so the plain gate fails, saying it is noise
    assert not plain.passed and "more than the allowed 0.01; not significant at n=30 (p=" in plain.failures[0]
    (line,) = [x for x in text(plain, max_drop=0.01).splitlines() if x.startswith("  power:")]
    assert line.startswith("  power: the smallest drop found significant 80% of the time (alpha 0.05 over 1 "
                           "metric(s), from the spread of the paired differences): recall@5 0.0")


def test_floors_and_coverage(tmp_path):
    a = make_run(tmp_path / "a", {"recall@5": [0.5, 0.6, 0.7, 0.8]})
    b = make_run(tmp_path / "b", {"recall@5": [0.5, 0.6, 0.7, None]})
    result = gate(b, a, floors={"recall@5": 0.9})
    assert not result.passed
    assert any("coverage fell: 1 more samples" in f for f in result.failures)
    assert any("below its floor 0.9" in f for f in result.failures)


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
    assert (f"measures: none in common (run A, {a.name}, holds ndcg@5; run B, {k3.name}, holds ndcg@3)"
            in " ".join(refused.output.split()))
    doc = json.loads(cli("gate", b.path, "--baseline", a.path, "--format", "json").stdout)
    assert doc["passed"] is False


def test_the_warranty_set_reversed_fails_the_plain_gate_and_says_why_not_significant(cli, warranty, runs_dir, tmp_path):
    """Issue 41's target: each retrieved list reversed, ``gate --max-drop 0.02`` exits 1 naming MRR
    and nDCG (the measures that fell), and says the drop is not significant at n=6;
    ``--significant-only`` passes the same runs, with the note that no drop can be significant."""
    rows = [json.loads(line) for line in (warranty / "dataset.jsonl").read_text().splitlines()]
    reversed_data = tmp_path / "reversed.jsonl"
    reversed_data.write_text("".join(json.dumps({**r, "retrieved": r["retrieved"][::-1]}) + "\n" for r in rows))
    assert cli("eval", warranty / "dataset.jsonl", "--name", "base", "--judge", "none").exit_code == 0
    assert cli("eval", reversed_data, "--name", "reversed", "--judge", "none").exit_code == 0
    base, new = (next(runs_dir.glob(f"*-{name}")) for name in ("base", "reversed"))
    out = cli("gate", new, "--baseline", base, "--max-drop", "0.02")
    assert out.exit_code == 1, out.output
    failures = [line.strip() for line in out.stdout.splitlines()[1:3]]
    assert [f.split()[0] for f in failures] == ["reciprocal_rank@5", "ndcg@5"]
    assert all("more than the allowed 0.02; not significant at n=6 (p=" in f for f in failures), failures
    assert "power: none at n=6" in out.stdout
    assert cli("gate", new, "--baseline", base, "--max-drop", "0.02", "--significant-only").exit_code == 0
