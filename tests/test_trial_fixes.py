"""Defects a new user's trial of ``main`` found (2026-12-01): each test fails on the code before its fix."""

from __future__ import annotations

import json

import pytest

from ragmeter.judges.cost import usd

# ---- 1. eval --dry-run needs no key and writes nothing ---------------------------------------------

def test_dry_run_needs_no_api_key_and_writes_nothing(cli, warranty, runs_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
              "--judge", "openai:gpt-4o-mini", "--dry-run", "--price-in", "0.15", "--price-out", "0.6",
              "--format", "json")
    assert out.exit_code == 0, out.output
    plan = json.loads(out.stdout)
    assert plan["calls"] == 2 and plan["calls_by_prompt"] == {"claims.extract": 1, "claims.verify": 1}
    assert plan["estimated_usd_at_most"] == round(usd(plan["estimated_input_tokens"], plan["max_output_tokens"],
                                                      0.15, 0.6), 6)
    assert not runs_dir.exists() and list(tmp_path.iterdir()) == []  # no ledger, no run directory
    table = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
                "--judge", "anthropic:claude-x", "--dry-run", "--price-in", "1", "--price-out", "2")
    assert table.exit_code == 0, table.output
    assert table.stdout.startswith("dry run: 2 judge calls needed (none made)")
    assert "cost at most about $" in table.stdout and not runs_dir.exists()
    unpriced = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
                   "--judge", "openai:gpt-4o-mini", "--dry-run")
    assert "cost: give --price-in and --price-out" in unpriced.stdout and not runs_dir.exists()


def test_dry_run_still_skips_what_the_ledger_holds(cli, warranty, seed_server, tmp_path, monkeypatch):
    """The planning judge has the real judge's ledger keys: after a real run, nothing is left to plan."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    base = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
            "--judge", "openai:m", "--ledger", tmp_path / "l.sqlite"]
    assert cli(*base, "--judge-base-url", seed_server.url + "/v1").exit_code == 0
    monkeypatch.delenv("OPENAI_API_KEY")
    plan = json.loads(cli(*base, "--dry-run", "--format", "json").stdout)
    # the extraction is stored; the verification is planned on stand-in claims, which the stored one did not use
    assert plan["calls_by_prompt"] == {"claims.verify": 1} and seed_server.count == 2


# ---- 2. gate with bars alone ------------------------------------------------------------------------

def test_gate_checks_floors_and_ceilings_without_a_baseline(cli, tmp_path):
    from .test_compare_gate import make_run

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


# ---- 3. n.s. beside an interval that excludes 0; n.s. in the gate's markdown ----------------------

def test_compare_says_which_of_p_and_interval_is_corrected(cli, tmp_path):
    """Six paired diffs of +0.1: the bootstrap interval is [+0.1, +0.1] and the exact randomization p
    2/2^6 = 0.03125 (significant alone), but Holm over the two metrics compared makes it 0.0625 (n.s.
    at 0.05). The legend names the metric and says which of the two is corrected."""
    from ragmeter.analysis.compare import compare_runs

    from .test_compare_gate import make_run

    a = make_run(tmp_path / "a", {"ndcg@5": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], "recall@5": [0.5] * 6})
    b = make_run(tmp_path / "b", {"ndcg@5": [0.2, 0.3, 0.4, 0.5, 0.6, 0.7], "recall@5": [0.5] * 6})
    m = compare_runs(a, b).metrics[0]
    assert m.p == pytest.approx(2 / 2**6) and m.p_holm == pytest.approx(2 * m.p)
    assert m.ci95 is not None and m.ci95[0] > 0
    out = cli("compare", a.path, b.path).stdout
    assert "n.s." in out
    assert "95% CI: paired bootstrap, per metric, not corrected for comparing several metrics" in out
    assert "interval excludes 0 but n.s.: ndcg@5 (p=0.0625 after Holm)" in out
    md = cli("gate", b.path, "--baseline", a.path, "--format", "markdown", "--max-drop", "0")
    row = next(line for line in md.stdout.splitlines() if line.startswith("| ndcg@5 |"))
    assert "+0.100 n.s." in row
    assert "| recall@5 |" in md.stdout and "+0.000 n.s." not in md.stdout  # no change: nothing to mark
    assert "interval excludes 0 but n.s.: ndcg@5" in md.stdout
    text = cli("gate", b.path, "--baseline", a.path, "--max-drop", "0").stdout
    assert "not significant (p=0.0625 after Holm)" in text  # the text output's word for the same verdict


# ---- 4. watch --once opens no port; watch --judge none says why -------------------------------------

def _watch_once(tmp_path, port: int) -> list[str]:
    import ragmeter.live.loop as loop
    from ragmeter.core.settings import Settings, WatchSettings

    from . import live_judge

    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i, answer="bad") for i in range(2)))
    said: list[str] = []
    watch = WatchSettings(log=str(log), state=str(tmp_path / "s"), port=port, once=True)
    assert loop.run_watch(Settings(judge="none", watch=watch), said.append) == 0
    return said


def test_watch_once_opens_no_port(tmp_path, monkeypatch):
    import ragmeter.live.loop as loop

    def no_server(*args, **kwargs):
        raise AssertionError("--once opened the Prometheus endpoint")

    monkeypatch.setattr(loop, "serve", no_server)
    said = _watch_once(tmp_path, port=9464)
    assert len(said) == 1 and not any("metrics on http" in line for line in said)


def test_watch_without_a_judge_says_why_nothing_was_computed(tmp_path):
    [line] = _watch_once(tmp_path, port=0)
    # "scored 2 new" when nothing was computed, before (issue 31): the head says so now
    assert line.startswith("read 2 new, nothing computed; last 100: faithfulness not computed on 2 (needs a judge: ")
    assert line.endswith(", answer_relevancy not computed on 2 (the same reason)")
    scored = [json.loads(x) for x in (tmp_path / "s" / "scored.jsonl").read_text().splitlines()]
    assert scored[0]["metrics"]["faithfulness"]["reason"].startswith("needs a judge")  # kept for a restart


# ---- 5. diagnose: an agent case whose checks could not be verified is not "no failure point found" ---

def test_diagnose_says_which_checks_could_not_be_verified_and_why(cli, warranty, runs_dir, tmp_path):
    """Without --records or a judge, a2-a4's criteria are Unable to Verify: diagnose said "no failure
    point found" for them, as for a case that passed."""
    from ragmeter.runs import list_runs

    out = cli("eval", warranty / "agent_runs.jsonl", "--action-criteria", warranty / "criteria.yaml",
              "-m", "action_pass_rate", "--judge", "none")
    assert out.exit_code == 0, out.output
    (run,) = list_runs(runs_dir)
    text = cli("diagnose", run.path).stdout
    assert "no failure point found" not in text
    a4 = text.split("a4: ", 1)[1].split("\n\n", 1)[0].splitlines()
    assert a4 == ["unable to verify: failed_action (nothing failed in what could be checked)",
                  "    unable to verify (failed_action): no tool calls were recorded for this case (declared_tools, "
                  "warranty-checked-first, one-order-at-most, order-placed)",
                  "    unable to verify (failed_action): no record source was given (order-on-record)"]
    assert "queries with checks that could not be verified: 4 (not counted as passed)" in text
    doc = json.loads(cli("diagnose", run.path, "--format", "json").stdout)
    a3 = next(q for q in doc["queries"] if q["id"] == "a3")
    assert a3["findings"] == [] and a3["unverified"] == [{"label": "failed_action",
                                                         "reason": "no record source was given (order-on-record)"}]
    assert cli("report", run.path, "--html", tmp_path / "r.html").exit_code == 0
    page = (tmp_path / "r.html").read_text()
    assert "unable to verify: no record source was given (order-on-record)" in page


def test_library_dry_run_needs_no_api_key_and_writes_nothing(warranty, tmp_path, monkeypatch):
    """``run_evaluation(Settings(dry_run=True))``, the CLI's own call, plans as the CLI does:
    no key, no ledger file, no run directory (it built the real judge, and so needed both)."""
    from ragmeter.core.settings import Settings
    from ragmeter.runs.driver import run_evaluation

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    done = run_evaluation(Settings(dataset=str(warranty / "dataset.jsonl"), corpus=str(warranty / "corpus.jsonl"),
                                   metrics=("faithfulness",), judge="openai:gpt-4o-mini", dry_run=True,
                                   runs_dir=str(tmp_path / "runs")))
    assert done.run_path is None and done.plan is not None and done.plan["calls"] == 2
    assert list(tmp_path.iterdir()) == []
