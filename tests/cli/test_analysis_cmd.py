"""Small honest messages: ``turns`` on a run with turns but nothing scored, ``agreement`` on
one labeled sample, ``correlate`` on six queries."""

from __future__ import annotations

import json
import re

import pytest

from ragmeter.runs import list_runs
from tests.analysis.test_compare import make_run


def test_turns_on_a_run_where_nothing_was_scored_says_so(cli, tmp_path, runs_dir):
    """It said "the run has no conversation turns"."""
    conv = {"id": "c1", "turns": [{"question": "Q1?", "retrieved": ["a"]}, {"question": "Q2?", "retrieved": ["b"]}]}
    data = tmp_path / "conv.jsonl"
    data.write_text(json.dumps(conv) + "\n")
    cli("eval", data, "-m", "precision")  # no labels: nothing scored
    (run,) = list_runs(runs_dir)
    out = cli("turns", run.path)
    assert out.exit_code == 2
    shown = " ".join(re.sub("[│╭╮╰╯─]", " ", out.output).split())  # rich's error box, unwrapped
    assert "the run has 2 conversation turn(s) but nothing scored on them (precision@5: no relevance labels for " \
           "this sample (2))" in shown


def test_agreement_on_one_labeled_sample_gives_no_kappa(cli, tmp_path):
    """It printed kappa 0.000."""
    run = make_run(tmp_path / "r", {"faithfulness": [1.0, 0.0, 1.0]})
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": "q0", "faithfulness": 0.0}) + "\n")
    out = cli("agreement", run.path, "--labels", labels)
    assert out.exit_code == 0, out.output
    assert "kappa n/a, Spearman n/a, Kendall n/a (n/a: agreement needs at least 2 labeled samples)" in out.stdout


def test_correlate_on_six_queries_does_not_claim_divergence(cli, tmp_path):
    """It flagged DIVERGES at n=6 with rho far from sure."""
    run = make_run(tmp_path / "r", {"precision@5": [0.2, 0.4, 0.6, 0.8, 1.0, 0.4],
                                    "ndcg@5": [0.3, 0.9, 0.5, 0.4, 1.0, 0.2]})
    out = cli("correlate", run.path)
    assert out.exit_code == 0
    line = out.stdout.strip()
    assert "DIVERGES" not in line
    assert line.endswith("over 6 queries  (expected > 0.8; below it here, but its 95% interval reaches it: too few "
                         "queries to tell)")
    many = make_run(tmp_path / "m", {"precision@5": [i / 40 for i in range(40)],
                                     "ndcg@5": [1 - i / 40 for i in range(40)]})
    assert "DIVERGES (expected > 0.8" in cli("correlate", many.path).stdout


def test_commands_that_read_runs_look_names_up_under_runs_dir(cli, warranty, tmp_path, monkeypatch):
    """compare, gate, correlate, agreement and turns take ``--runs-dir`` as show and report do:
    a run's name is found there, from any working directory."""
    runs_dir = tmp_path / "mine"  # not the default folder ($RAGMETER_RUNS_DIR, set by the fixtures)
    for name in ("a", "b"):
        assert cli("eval", warranty / "dataset.jsonl", "--name", name, "--runs-dir", runs_dir).exit_code == 0
    a, b = sorted(run.path.name for run in list_runs(runs_dir))
    monkeypatch.chdir(tmp_path)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": "q1", "precision@5": 1.0}) + "\n")
    for args in (("compare", a, b), ("gate", b, "--baseline", a), ("correlate", a),
                 ("agreement", a, "--labels", labels)):
        assert cli(*args).exit_code != 0, args  # without --runs-dir the name is not found
        found = cli(*args, "--runs-dir", runs_dir)
        assert found.exit_code == 0, (args, found.output)
    turns = cli("turns", a, "--runs-dir", runs_dir)
    assert "has no conversation turns" in turns.output  # found, and read: the example has none
    assert "not a ragmeter run directory" in cli("turns", a).output


def test_agreement_confusion_line_rounds_and_json_keeps_the_values(cli, tmp_path):
    from tests.analysis.test_compare import make_run

    run = make_run(tmp_path / "a", {"faithfulness": [2 / 3, 1.0, 0.0, 2 / 3]})
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": f"q{i}", "faithfulness": v}) + "\n"
                              for i, v in enumerate([1.0, 1.0, 0.0, 0.5])))
    out = cli("agreement", run.path, "--labels", labels)
    assert out.exit_code == 0, out.output
    line = next(x for x in out.stdout.splitlines() if "confusion:" in x)
    assert line == "    confusion: judge=0|human=0 1, judge=0.667|human=0.5 1, judge=0.667|human=1 1, judge=1|human=1 1"
    doc = json.loads(cli("agreement", run.path, "--labels", labels, "--format", "json").stdout)
    assert f"judge={2 / 3}|human=1.0" in doc[0]["confusion"]  # the JSON keeps the values whole


def test_correlate_says_query_for_one(cli, tmp_path):
    from tests.analysis.test_compare import make_run

    one = make_run(tmp_path / "one", {"precision@5": [0.2], "recall@5": [0.1]})
    assert "on at most 1 query)" in cli("correlate", one.path).stdout  # too few for a rho: said once
    two = make_run(tmp_path / "two", {"precision@5": [0.2, 0.4], "recall@5": [0.1, 0.3]})
    assert "on at most 2 queries)" in cli("correlate", two.path).stdout
    three = make_run(tmp_path / "three", {"precision@5": [0.2, 0.4, 0.6], "recall@5": [0.1, 0.3, 0.2]})
    assert "over 3 queries" in cli("correlate", three.path).stdout


@pytest.fixture
def two_runs(tmp_path):
    a = make_run(tmp_path / "a", {"recall@5": [0.5, 0.7, 0.9]})
    b = make_run(tmp_path / "b", {"recall@5": [0.5, 0.7, 0.9]})
    return a.path, b.path


@pytest.mark.parametrize("args,flag", [
    (["--min", "recall@5=nan"], "--min"),
    (["--min", "recall@5=inf"], "--min"),
    (["--min", "recall@5=high"], "--min"),
    (["--alpha", "5"], "--alpha"),
    (["--alpha", "0"], "--alpha"),
    (["--alpha", "nan"], "--alpha"),
    (["--max-drop", "nan"], "--max-drop"),
    (["--max-drop", "-0.1"], "--max-drop"),
])
def test_gate_refuses_numbers_that_cannot_be_thresholds(cli, two_runs, args, flag):
    new, base = two_runs
    out = cli("gate", new, "--baseline", base, *args)
    assert out.exit_code == 2, out.output
    assert flag in out.output and "Usage" in out.output
    assert cli("gate", new, "--baseline", base, "--min", "recall@5=0.5").exit_code == 0


def test_correlate_says_once_which_pairs_have_too_few_queries(cli, tmp_path):
    """README's first run: five label metrics on six queries, five answer metrics on q1 alone; 35 of
    the 45 lines read "rho n/a over 1 query"."""
    label = {m: [0.4, 0.2, 0.2, 0.4, 0.0, 0.6] for m in ("precision@5", "recall@5", "hit_rate@5")}
    label.update({"reciprocal_rank@5": [0.5, 1.0, 0.2, 1.0, 0.0, 1.0], "ndcg@5": [0.498, 1.0, 0.387, 1.0, 0.0, 0.885]})
    answer = {m: [0.6, None, None, None, None, None] for m in ("faithfulness", "context_recall", "factual_correctness",
                                                                "answer_relevancy", "semantic_similarity")}
    run = make_run(tmp_path / "r", {**label, **answer})
    out = cli("correlate", run.path)
    assert out.exit_code == 0, out.output
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 10 + 1 and not any("over 1 query" in line for line in lines)
    assert lines[-1] == ("no rho for 35 pairs (rho needs 3 queries that both metrics scored): every pair of "
                         "faithfulness, context_recall, factual_correctness, answer_relevancy, semantic_similarity "
                         "(each scored with another metric on at most 1 query)")
    assert len(json.loads(cli("correlate", run.path, "--format", "json").stdout)) == 45  # JSON keeps every pair
    two = make_run(tmp_path / "t", {"precision@5": [0.1, 0.2, 0.3, None], "ndcg@5": [None, 0.2, 0.3, 0.4],
                                    "recall@5": [0.1, 0.2, 0.3, 0.4]})
    assert cli("correlate", two.path).stdout.strip().splitlines()[-1] == (
        "no rho for 1 pair (rho needs 3 queries that both metrics scored): precision@5 ~ ndcg@5 (2 queries)")
