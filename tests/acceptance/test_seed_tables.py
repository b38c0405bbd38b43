"""Every number the seed article prints for Steps 1 and 2 and its 'other definitions' table."""

from __future__ import annotations

import json

import pytest

import ragmeter

STEP1 = """\
query  ranks 1-5  relevant  P@5    R@5    hit  RR     nDCG@5
q1     .R.R.      3         0.400  0.667  1    0.500  0.498
q2     R....      1         0.200  1.000  1    1.000  1.000
q3     ....R      1         0.200  1.000  1    0.200  0.387
q4     RR...      2         0.400  1.000  1    1.000  1.000
q5     .....      1         0.000  0.000  0    0.000  0.000
q6     R.R.R      3         0.600  1.000  1    1.000  0.885"""

STEP1_MEAN = "mean   precision@5 0.300 | recall@5 0.778 | hit rate@5 0.833 | MRR 0.617 | nDCG@5 0.628"

# view -> P@k, R@k, RR, nDCG@k, AP, rank-weighted precision (seed: "q1 under three conditions")
THREE_CONDITIONS = {
    "top 5 retrieved": ("0.400", "0.667", "0.500", "0.498", "0.333", "0.500"),
    "top 3 kept": ("0.333", "0.333", "0.500", "0.296", "0.167", "0.500"),
    "top 5 reranked": ("0.400", "0.667", "1.000", "0.765", "0.667", "1.000"),
}
CONTEXT_METRICS = "precision,recall,reciprocal_rank,ndcg,average_precision,rank_weighted_precision"

OTHER_DEFINITIONS = {  # seed: "q1, top 5 retrieved, same list under other definitions"
    "hit_rate@5": "1.000",
    "hit_rate(granular=True)@5": "0.667",
    "reciprocal_rank@5": "0.500",
    "reciprocal_rank(granular=True)@5": "0.375",
    "ndcg@5": "0.498",
    "ndcg(discount='jk2002')@5": "0.570",
}


def test_step1_table_is_printed_exactly_as_the_seed(cli, warranty):
    result = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl")
    assert result.exit_code == 0
    assert result.stdout.startswith(STEP1 + "\n")
    assert STEP1_MEAN in result.stdout.splitlines()
    for metric in ("precision@5", "recall@5", "hit_rate@5", "reciprocal_rank@5", "ndcg@5"):
        assert f"{metric}: 6 scored, 0 not computed, 0 failed" in result.stdout


def test_step1_means_in_json(cli, warranty):
    out = json.loads(cli("eval", warranty / "dataset.jsonl", "--format", "json").stdout)
    means = {name: f"{m['mean']:.3f}" for name, m in out["metrics"].items()}
    assert means == {"precision@5": "0.300", "recall@5": "0.778", "hit_rate@5": "0.833",
                     "reciprocal_rank@5": "0.617", "ndcg@5": "0.628"}
    assert all(m["scored"] == 6 and m["not_computed"] == 0 and m["failed"] == 0 for m in out["metrics"].values())
    prov = out["metrics"]["ndcg@5"]["provenance"]
    assert prov["metric_version"] == 1 and prov["k"] == 5 and prov["ragmeter_version"] == ragmeter.__version__
    assert prov["dataset_fingerprint"] == out["dataset"]["fingerprint"]


def test_step2_three_conditions(warranty):
    data = ragmeter.load_dataset(warranty / "q1_views.jsonl")
    result = ragmeter.evaluate(data, CONTEXT_METRICS.split(","), view="context")
    names = result.metric_names
    for i, sample in enumerate(result.samples):
        got = tuple(f"{result.values(n)[i]:.3f}" for n in names)
        assert got == THREE_CONDITIONS[sample.id], sample.id


def test_step2_three_conditions_cli(cli, warranty):
    out = cli("eval", warranty / "q1_views.jsonl", "--view", "context", "--metrics", CONTEXT_METRICS).stdout
    for view, values in THREE_CONDITIONS.items():
        row = next(line for line in out.splitlines() if line.startswith(view))
        assert row.split()[-6:] == list(values)


def test_trimming_is_a_context_fault_not_a_retrieval_fault(warranty):
    """Seed: recall falls from 0.667 to 0.333 between the retriever's list and the prompt."""
    data = ragmeter.load_dataset(warranty / "q1_views.jsonl")
    result = ragmeter.evaluate(data, ["recall"], view="both")
    trimmed = [s.id for s in result.samples].index("top 3 kept")
    assert round(result.values("recall@5")[trimmed], 3) == 0.667
    assert round(result.values("recall(view='context')")[trimmed], 3) == 0.333


def test_other_definitions_on_q1(cli, warranty):
    out = json.loads(cli("eval", warranty / "dataset.jsonl", "--only", "q1", "--format", "json",
                         "--metrics", ",".join(OTHER_DEFINITIONS)).stdout)
    got = {name: f"{m['mean']:.3f}" for name, m in out["metrics"].items()}
    assert got == OTHER_DEFINITIONS


@pytest.mark.parametrize("name", list(OTHER_DEFINITIONS))
def test_other_definition_names_round_trip(name):
    assert str(ragmeter.parse_measure(name)) == name
