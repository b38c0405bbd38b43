"""``judge-check --set mtrag-dev``: an API judge (a scripted one behind the loopback HTTP server)
scores the bundled MTRAG responses; the correlations it prints are recomputed here with scipy
from the scripted verdicts, and the responses with no passages are counted, not hidden."""

from __future__ import annotations

import json
import re
from collections import Counter

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from ragmeter.cli.main import app
from ragmeter.trust import mtrag_check, mtrag_set
from tests import judge_server

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 3}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def verdict(claim: str, evidence: str) -> str:
    """The scripted judge: supported when most of the claim's words are in the evidence,
    contradicted when a number of the claim is not, else not found."""
    words = _words(claim)
    share = len(words & _words(evidence)) / max(1, len(words))
    if share >= 0.6:
        return "supported"
    numbers = set(re.findall(r"\d+", claim))
    return "contradicted" if numbers - set(re.findall(r"\d+", evidence)) and share >= 0.3 else "not_found"


def responder(user_text: str, payload: dict) -> dict:
    name = payload["response_format"]["json_schema"]["name"]
    if name == "claims":
        answer = user_text.split("ANSWER:\n", 1)[1].split("\n\nREFERENCE ANSWER:\n", 1)[0]
        reference = user_text.split("\n\nREFERENCE ANSWER:\n", 1)[1].split("\n\nSplit the ANSWER", 1)[0]
        claims = [] if answer == "(not needed)" else _sentences(answer)
        refs = [] if reference == "(not needed)" else _sentences(reference)
        return {"claims": [{"id": i, "text": t, "addresses_question": True, "cites": []}
                           for i, t in enumerate(claims, start=1)],
                "declines": False, "reference_claims": [{"id": i, "text": t} for i, t in enumerate(refs, start=1)]}
    assert name == "verdicts", name
    evidence = user_text.split("EVIDENCE", 1)[1].split(":\n", 1)[1].split("\n\nCLAIMS:\n", 1)[0]
    listing = user_text.split("\n\nCLAIMS:\n", 1)[1].split("\n\nFor every claim", 1)[0]
    claims = dict(re.findall(r"^(\d+)\. (.*)$", listing, flags=re.M))
    wanted = re.findall(r"for id ([\d, ]+) \(the other", user_text)
    ids = [int(x) for x in wanted[-1].split(",")] if wanted else [int(i) for i in claims]
    return {"verdicts": [{"id": i, "verdict": verdict(claims[str(i)], evidence), "sources": [], "combined": False,
                          "quote": ""} for i in ids]}


def expected_faithfulness(item: mtrag_set.Rated) -> float | None:
    """The same rule, outside ragmeter: supported sentences / sentences (None: no passages)."""
    if not item.passages:
        return None
    evidence = "\n".join(f"[{pid}] {text}" for pid, text in item.passages)
    claims = _sentences(item.response)
    return sum(verdict(c, evidence) == "supported" for c in claims) / len(claims)


def test_correlations_and_intervals_agree_with_scipy():
    rng = np.random.default_rng(1)
    human = rng.integers(1, 5, size=60).astype(float)
    score = human + rng.normal(0, 1.5, size=60)
    groups = [f"t{i // 3}" for i in range(60)]
    c = mtrag_check.correlations(list(score), list(human), groups, draws=300)
    assert c["spearman"] == pytest.approx(stats.spearmanr(score, human).statistic, abs=1e-12)
    assert c["kendall"] == pytest.approx(stats.kendalltau(score, human).statistic, abs=1e-12)
    lo, hi = c["spearman95"]
    assert lo < c["spearman"] < hi and 0 < hi - lo < 1


def test_a_bootstrap_draw_is_scored_as_the_replicated_sample():
    """The weighted statistics of a draw equal scipy's on the responses repeated as drawn."""
    rng = np.random.default_rng(2)
    x, y = rng.integers(0, 5, size=12).astype(float), rng.integers(1, 5, size=12).astype(float)
    w = rng.integers(0, 4, size=(3, 12)).astype(float)
    rho, tau = mtrag_check._weighted(x, y, w)
    for d in range(3):
        rx, ry = np.repeat(x, w[d].astype(int)), np.repeat(y, w[d].astype(int))
        assert rho[d] == pytest.approx(stats.spearmanr(rx, ry).statistic, abs=1e-12)
        assert tau[d] == pytest.approx(stats.kendalltau(rx, ry).statistic, abs=1e-12)


@pytest.mark.slow
def test_judge_check_on_mtrag_dev_with_an_api_judge(tmp_path):
    srv, state = judge_server.start(responder)
    try:
        out = CliRunner().invoke(app, ["judge-check", "--set", "mtrag-dev", "--limit", "60", "--judge", "openai:m",
                                       "--judge-base-url", state.url + "/v1", "--format", "json",
                                       "--progress", "none"], catch_exceptions=False)
        table = CliRunner().invoke(app, ["judge-check", "--set", "mtrag-dev", "--limit", "60", "--judge", "openai:m",
                                         "--judge-base-url", state.url + "/v1", "--progress", "none"],
                                   catch_exceptions=False)
    finally:
        srv.shutdown()
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["drawn"].startswith("60 of 234 responses, drawn in the set's own mix")
    rows = {r["metric"]: r for r in report["rows"]}
    assert list(rows) == ["faithfulness", "faithfulness(unsupported='pass')", "-contradiction_rate",
                          "factual_correctness(mode='recall')"]
    items = mtrag_set.stratified(mtrag_set.load_set(), 60)
    expected = {i.id: expected_faithfulness(i) for i in items}
    scored = [i for i in items if expected[i.id] is not None]
    faith = rows["faithfulness"]
    assert faith["n"] == len(scored)
    # the responses shown no passages are counted with their human ratings, not dropped silently
    empty = [i for i in items if not i.passages]
    assert empty and sum(v["n"] for v in faith["not_scored"].values()) == len(empty)
    (reason, left_out), = faith["not_scored"].items()
    assert "context" in reason
    assert left_out["human"] == {str(k): v for k, v in sorted(Counter(i.human("faithfulness") for i in empty).items())}
    human = [i.human("faithfulness") for i in scored]
    assert faith["spearman"] == pytest.approx(stats.spearmanr([expected[i.id] for i in scored], human).statistic,
                                              abs=1e-4)
    assert faith["kendall"] == pytest.approx(stats.kendalltau([expected[i.id] for i in scored], human).statistic,
                                             abs=1e-4)
    kprec = faith["beside"]["Bert-KPrec"]
    assert kprec["spearman"] == pytest.approx(
        stats.spearmanr([i.baselines["Bert-KPrec"] for i in scored], human).statistic, abs=1e-4)
    assert kprec["spearman95"][0] < kprec["spearman"] < kprec["spearman95"][1]
    completeness = rows["factual_correctness(mode='recall')"]
    assert completeness["responses"].startswith("the two models'")
    assert completeness["n"] + sum(v["n"] for v in completeness["not_scored"].values()) == sum(
        i.model != "reference" for i in items)
    assert table.exit_code == 0, table.output
    assert "beside: Bert-KPrec" in table.stdout and "responses not scored" in table.stdout
    assert "60 of 234 responses" in table.stdout


def test_the_mean_by_rating_of_a_negated_metric_is_printed_negated():
    """``-contradiction_rate`` is scored as minus the rate; its mean by rating is minus the mean
    rate, as its label says (it was the rate itself, signed twice)."""
    from types import SimpleNamespace

    items = mtrag_set.load_set()[:6]
    rates = [0.0, 0.25, 0.5, 0.0, 0.1, 0.2]
    outcomes = {m: {i.id: SimpleNamespace(value=r) for i, r in zip(items, rates)} for m in mtrag_check.METRICS}
    row = next(r for r in mtrag_check.report(items, outcomes, draws=20) if r.check.metric == "contradiction_rate")
    by: dict[float, list[float]] = {}
    for item, rate in zip(items, rates):
        by.setdefault(item.human("faithfulness"), []).append(-rate)
    assert row.mean_by_rating == {str(h): round(float(np.mean(v)), 3) for h, v in sorted(by.items())}
    assert all(v <= 0 for v in row.mean_by_rating.values())


def test_too_few_scored_responses_are_said_not_left_as_bare_na():
    """``--limit 2`` printed a table of n/a with no reason and no baselines (the new-user trial)."""
    from types import SimpleNamespace

    items = mtrag_set.load_set()[:2]
    outcomes = {m: {i.id: SimpleNamespace(value=0.5) for i in items} for m in mtrag_check.METRICS}
    shown = "\n".join(mtrag_check.lines(mtrag_check.report(items, outcomes, draws=20)))
    assert "faithfulness: 2 response(s) scored, fewer than the 3 a correlation needs" in shown
    assert "give a larger --limit" in shown


def test_word_overlap_k_precision_and_rl_f_stand_beside_the_judge():
    """Issue 37: the table shows word-overlap K-Precision (computed here) and the benchmark's own LLM
    judge rl_f (kept in the bundled file) beside Bert-KPrec and RougeL."""
    from ragmeter.metrics.generation.kprecision import words_k_precision

    items = [i for i in mtrag_set.load_set() if i.passages]
    assert all(isinstance(i.baselines["rl_f"], float) for i in items)
    item = items[0]
    assert mtrag_check.baseline(item, "K-Precision") == words_k_precision(item.response, [t for _, t in item.passages])
    assert mtrag_check.baseline(item, "rl_f") == item.baselines["rl_f"]
    faith = next(c for c in mtrag_check.CHECKS if c.metric == "faithfulness")
    assert faith.baselines == ("K-Precision", "Bert-KPrec", "RougeL", "rl_f")
    human = [i.human("faithfulness") for i in items]  # the figures, on all 216
    rho = stats.spearmanr([mtrag_check.baseline(i, "rl_f") for i in items], human).statistic
    assert round(rho, 2) == 0.59
