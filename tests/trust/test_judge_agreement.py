"""One Cohen's kappa for judge-vs-human and labeler-vs-labeler agreement, with one rule for the
case it is undefined: both raters constant on the same label (chance agreement 1) is None."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from ragmeter.label import agreement as label_agreement
from ragmeter.trust.judge_agreement import agreement, cohen_kappa, kendall_tau_b


def test_the_label_module_uses_the_one_kappa():
    assert label_agreement.cohen_kappa is cohen_kappa


@pytest.mark.parametrize("a,b", [([1, 1, 1], [1, 1, 1]), (["x"] * 4, ["x"] * 4)])
def test_constant_agreeing_raters_have_no_kappa(a, b):
    assert cohen_kappa(a, b) is None
    assert agreement(dict(zip("abcd", map(float, [1] * len(a)))), dict(zip("abcd", [1.0] * len(b))),
                     "m").kappa is None  # judge vs human: it was 1.0 here and None between labelers


def test_constant_raters_that_disagree_have_kappa_zero():
    assert cohen_kappa([1, 1, 1], [0, 0, 0]) == 0.0  # p_o = 0, p_e = 0


def test_agreement_with_unknown_ids_is_an_error(cli, warranty, runs_dir, tmp_path):
    assert cli("eval", warranty / "dataset.jsonl", "--metrics", "hit_rate").exit_code == 0
    from ragmeter.runs import list_runs

    (run,) = list_runs(runs_dir)
    labels = tmp_path / "labels.csv"
    labels.write_text("id,hit_rate@5\nq1,1\nnope,1\n")
    out = cli("agreement", run.path, "--labels", labels)
    assert out.exit_code == 2 and "1 labeled id(s) are not samples of the run: 'nope'" in out.output, out.output


def test_kappa_and_correlations_match_the_references():
    # Cohen's kappa on the 2x2 table [[20, 5], [10, 15]]: p_o = .7, p_e = .5 -> 0.4
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx((0.7 - 0.5) / (1 - 0.5))
    x, y = [0.1, 0.4, 0.4, 0.9, 0.3, 0.7], [0.2, 0.1, 0.5, 0.8, 0.3, 0.9]
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
    ag = agreement({f"q{i}": v for i, v in enumerate(x)}, {f"q{i}": v for i, v in enumerate(y)}, "m")
    assert ag.spearman == pytest.approx(stats.spearmanr(x, y).statistic) and ag.n == 6


def test_agreement_command(cli, warranty, runs_dir, tmp_path):
    assert cli("eval", warranty / "dataset.jsonl", "--metrics", "hit_rate").exit_code == 0
    labels = tmp_path / "labels.csv"
    labels.write_text("id,hit_rate@5\nq1,1\nq2,1\nq3,0\nq4,1\nq5,0\n")
    from ragmeter.runs import list_runs

    (run,) = list_runs(runs_dir)
    out = cli("agreement", run.path, "--labels", labels)
    assert out.exit_code == 0 and "hit_rate@5: 5 labeled" in out.stdout and "kappa" in out.stdout
    doc = json.loads(cli("agreement", run.path, "--labels", labels, "--format", "json").stdout)
    assert doc[0]["kappa"] == pytest.approx(cohen_kappa([1, 1, 1, 1, 0], [1, 1, 0, 1, 0]))
