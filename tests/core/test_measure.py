"""``-m ndcg@0``: the message says how to score the whole list (it said "leave @k out", which
gives @5)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ragmeter
from ragmeter import InvalidParameterError, make_measure, parse_measure
from ragmeter.analysis.compare import compare_runs
from ragmeter.analysis.gate import gate
from ragmeter.core.measure import MeasureNotFound, split_measure_text
from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.live.alerts import Alert
from ragmeter.live.watch import Watcher
from ragmeter.metrics import REGISTRY
from ragmeter.runs import finish_run, load_run, start_run
from tests import live_judge


def test_k_0_names_the_way_to_the_whole_list(warranty):
    with pytest.raises(InvalidParameterError) as info:
        split_measure_text("ndcg@0")
    assert str(info.value) == ("ndcg: k must be >= 1, got 0 (without @k a measure is cut at the run's k, 5 by "
                               "default; for the whole list give --k 0, or k=None in Python)")
    # both halves of the message hold
    assert list(ragmeter.evaluate(warranty / "dataset.jsonl", "ndcg").means()) == ["ndcg@5"]
    assert list(ragmeter.evaluate(warranty / "dataset.jsonl", "ndcg", k=None).means()) == ["ndcg"]


def test_the_cli_k_0_scores_the_whole_list(cli, warranty):
    out = cli("eval", warranty / "dataset.jsonl", "-m", "ndcg", "--k", "0", "--no-save", "--format", "json")
    assert out.exit_code == 0 and '"ndcg"' in out.stdout and '"ndcg@5"' not in out.stdout


NAMES = sorted(REGISTRY)


ALIASES = sorted((alias, name) for name, spec in REGISTRY.items() for alias in (name, *spec.aliases))


K = 5


def variants(name):
    """The measure at its default k and at an explicit one, with each declared parameter value."""
    spec = REGISTRY[name]
    ks = (None, 7) if spec.accepts_k else (None,)
    for k in ks:
        yield make_measure(name, k)
        for pname, param in spec.params.items():
            for value in param.choices or (param.default,):
                yield make_measure(name, k, **{pname: value})


@pytest.mark.parametrize("name", NAMES)
def test_repr_is_the_canonical_name_and_parses_back_to_an_equal_measure(name):
    for m in variants(name):
        assert repr(m) == str(m)
        back = parse_measure(repr(m))
        assert back == m and hash(back) == hash(m) and back.params == m.params and back.k == m.k
        assert {m: 1}[back] == 1  # usable as a key


def test_distinct_measures_are_unequal():
    a, b, c = make_measure("ndcg", 5), make_measure("ndcg", 10), make_measure("ndcg", 5, discount="jk2002")
    assert len({a, b, c, parse_measure("ndcg@5"), parse_measure("n_dcg@5")}) == 3


@pytest.mark.parametrize("alias,name", ALIASES)
def test_every_alias_parses_to_its_metric(alias, name):
    assert parse_measure(alias).name == name
    if REGISTRY[name].accepts_k:
        assert parse_measure(f"{alias}@{K}") == make_measure(name, K)


def test_the_hyphenated_alias_parses():
    assert parse_measure("r-precision") == make_measure("r_precision")
    assert repr(parse_measure("r-precision@10")) == "r_precision@10"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """Every registered metric at its defaults (k = 5) on the warranty sample; no judge, and an
    embedder that needs no model, so every outcome exists (scored or not computed)."""
    data = ragmeter.load_dataset("examples/warranty/dataset.jsonl", corpus="examples/warranty/corpus.jsonl")
    return ragmeter.evaluate(data, NAMES, k=K, embedder=lambda texts: np.ones((len(texts), 3)))


@pytest.fixture(scope="module")
def saved(result, tmp_path_factory):
    path = tmp_path_factory.mktemp("runs") / "all"
    finish_run(path, start_run(path, {}), result)
    return load_run(path)


@pytest.mark.parametrize("alias,name", ALIASES)
def test_every_alias_resolves_through_every_result_lookup(result, alias, name):
    held = next(m for m in result.measures if m.name == name)
    written = [alias] + ([f"{alias}@{K}"] if REGISTRY[name].accepts_k else [])
    for key in written:
        assert result.measure(key) == held
        assert result[key] == result[held] == result.outcomes[key]
        assert result.summary(key) == result.summary(str(held))
        assert result.values(key) == result.values(held)
        assert result.outcome(key, "q1") is result[held][0]
        assert key in result.outcomes


@pytest.mark.parametrize("alias,name", ALIASES)
def test_every_alias_resolves_in_gate_floors_and_compare_filters(saved, alias, name):
    canonical = str(make_measure(name, K if REGISTRY[name].accepts_k else None))
    written = [alias] + ([f"{alias}@{K}"] if REGISTRY[name].accepts_k else [])
    for key in written:
        assert saved.key(key) == canonical
        assert [m.metric for m in compare_runs(saved, saved, metrics=[key]).metrics] == [canonical]
        # a floor under every value for a higher-is-better metric, a ceiling over every value for a
        # lower-is-better one (a floor there is refused: see tests/test_testing.py)
        bars = "floors" if REGISTRY[name].higher_is_better else "ceilings"
        bar = -1.0 if REGISTRY[name].higher_is_better else 2.0
        outcome = gate(saved, saved, metrics=[key], **{bars: {key: bar}})
        assert getattr(outcome, bars) == {canonical: bar}
        mean = saved.summary[canonical]["mean"]
        assert outcome.passed == (mean is not None)  # a floor on a metric with no mean fails, by name
        assert all(f.startswith(canonical) for f in outcome.failures)


def test_a_bare_name_held_at_several_cut_offs_is_an_error_listing_them(warranty):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl")
    r = ragmeter.evaluate(data, ["mrr@5", "mrr@10", "ndcg"], k=None)
    with pytest.raises(MeasureNotFound, match=r"'mrr' is ambiguous.*reciprocal_rank@5, reciprocal_rank@10"):
        r["mrr"]
    with pytest.raises(KeyError):  # it is also a KeyError, as a mapping's look-up should raise
        r.summary("reciprocal_rank")
    assert r.summary("mrr@10").mean == r.summary("reciprocal_rank@10").mean
    assert r.measure("ndcg") == make_measure("ndcg")  # the whole list, held without a cut-off
    assert "mrr" not in r.outcomes and "mrr@10" in r.outcomes


def test_the_uncut_measure_wins_over_a_cut_one_for_a_bare_name(warranty):
    r = ragmeter.evaluate(ragmeter.load_dataset(warranty / "dataset.jsonl"), ["recall", "recall@3"], k=None)
    assert r.measure("recall") == make_measure("recall")


def test_a_name_not_held_says_what_is_held(warranty):
    r = ragmeter.evaluate(ragmeter.load_dataset(warranty / "dataset.jsonl"), ["ndcg@5", "mrr@5"])
    with pytest.raises(MeasureNotFound, match=r"no measure 'recall@5'.*holds: ndcg@5, reciprocal_rank@5"):
        r["recall@5"]
    with pytest.raises(MeasureNotFound, match=r"no measure 'mrr@10'.*holds: reciprocal_rank@5"):
        r.values("mrr@10")
    with pytest.raises(MeasureNotFound, match=r"no measure 'faithfulness'"):
        r["faithfulness"]
    judged = ragmeter.evaluate(ragmeter.load_dataset(warranty / "dataset.jsonl"), ["faithfulness"])
    with pytest.raises(InvalidParameterError, match="takes no cut-off"):
        judged["faithfulness@5"]


def test_k_zero_is_refused_and_none_is_the_whole_list(warranty):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl")
    with pytest.raises(InvalidParameterError, match="None for the whole list"):
        ragmeter.evaluate(data, ["precision"], k=0)
    whole = ragmeter.evaluate(data, ["precision"], k=None)
    assert whole.measures == (make_measure("precision"),)


def _run_dir(path, values):
    path.mkdir(parents=True)
    results = [{"id": f"q{i}", "metrics": {m: {"status": "scored", "value": v[i]} for m, v in values.items()}}
               for i in range(len(next(iter(values.values()))))]
    summary = {m: {"mean": sum(v) / len(v), "scored": len(v), "not_computed": 0, "failed": 0}
               for m, v in values.items()}
    setup = {"status": "complete", "dataset": {"testset_fingerprint": "t"},
             "metrics": {m: {"metric_name": parse_measure(m).name, "metric_version": 1} for m in values}}
    (path / "setup.json").write_text(json.dumps(setup))
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    (path / "summary.json").write_text(json.dumps(summary))
    return path


def test_cli_gate_floor_and_compare_filter_take_aliases(cli, tmp_path):
    a = _run_dir(tmp_path / "a", {"reciprocal_rank@5": [1.0, 0.5, 1.0, 0.2], "ndcg@5": [0.9, 0.8, 0.7, 0.6]})
    b = _run_dir(tmp_path / "b", {"reciprocal_rank@5": [1.0, 1.0, 1.0, 0.5], "ndcg@5": [0.9, 0.8, 0.7, 0.6]})
    out = cli("compare", a, b, "-m", "mrr@5")
    assert out.exit_code == 0 and "reciprocal_rank@5" in out.stdout and "ndcg@5" not in out.stdout
    assert cli("gate", b, "--baseline", a, "--min", "mrr@5=0.5").exit_code == 0
    below = cli("gate", b, "--baseline", a, "--min", "mrr=0.9")
    assert below.exit_code == 1 and "reciprocal_rank@5 0.875 is below its floor 0.9" in below.stdout
    missing = cli("compare", a, b, "-m", "recall@5")
    assert missing.exit_code == 2 and "no measure 'recall@5'" in missing.stderr and "holds: reciprocal_rank@5" \
        in missing.stderr
    assert cli("gate", b, "--baseline", a, "--min", "recall@5=0.5").exit_code == 2


def test_watch_metrics_and_alerts_resolve(tmp_path):
    w = Watcher(str(tmp_path / "log.jsonl"), Judge(ScriptedBackend(live_judge.scripted)), tmp_path / "state",
                metrics=["groundedness", "response_relevancy"], alerts=[Alert("groundedness", below=0.5)])
    assert w.names == ["faithfulness", "answer_relevancy"] and w.alerts[0].metric == "faithfulness"
    assert set(w.window_summary()) == {"faithfulness", "answer_relevancy"}
    with pytest.raises(MeasureNotFound, match="the watched metrics has no measure 'recall'"):
        Watcher(str(tmp_path / "log.jsonl"), None, tmp_path / "state2", alerts=[Alert("recall", below=0.5)])


def test_measure_html_and_repr():
    m = make_measure("contradiction_rate")
    assert repr(m) == "contradiction_rate"
    page = m._repr_html_()
    assert "lower" in page and "definition" in page
