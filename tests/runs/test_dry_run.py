"""``ragmeter.runs.dry_run``: ``eval --dry-run`` without the run: the judge calls, tokens and cost a run would need."""

from __future__ import annotations

import json


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


def _dry_run(cli, warranty, seed_server, tmp_path, *extra):
    return cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
               "--judge", "openai:m", "--judge-base-url", seed_server.url + "/v1", "--ledger", tmp_path / "l.sqlite",
               "--dry-run", *extra)


def test_dry_run_as_a_table_is_a_summary_for_a_person(cli, warranty, seed_server, tmp_path):
    table = _dry_run(cli, warranty, seed_server, tmp_path)
    assert table.exit_code == 0, table.output
    plan = json.loads(_dry_run(cli, warranty, seed_server, tmp_path, "--format", "json").stdout)  # as before
    assert plan["calls"] == 2 and plan["calls_by_prompt"] == {"claims.extract": 1, "claims.verify": 1}
    assert not table.stdout.lstrip().startswith("{")
    lines = table.stdout.splitlines()
    assert lines[0] == "dry run: 2 judge calls needed (none made)"
    assert [x.split() for x in lines[1:3]] == [["claims.extract", "1"], ["claims.verify", "1"]]
    assert f"estimated input tokens: {plan['estimated_input_tokens']}" in lines
    assert f"output tokens at most: {plan['max_output_tokens']}" in lines
    assert f"note: {plan['note']}" in lines
    none = cli("eval", warranty / "dataset.jsonl", "-m", "ndcg@5", "--dry-run")
    assert none.stdout == "dry run: no judge call needed (no judged metric requested)\n"


def test_a_dry_run_plans_a_rubric_on_a_custom_criterion(cli, warranty, tmp_path, monkeypatch):
    """The dry run built its sources by hand without the rubric criteria: a criterion from
    ``--criteria`` was unknown to it (exit 1, ``KeyError: 'tone'``), while the real run knew it."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    crit = tmp_path / "crit.json"
    crit.write_text(json.dumps({"criteria": [{"name": "tone", "description": "Is it polite?", "scale": [0, 10]}]}))
    done = cli("eval", warranty / "dataset.jsonl", "-m", "rubric(criterion='tone')", "--criteria", crit,
               "--judge", "openai:gpt-4o-mini", "--dry-run", "--format", "json")
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    assert plan["calls_by_prompt"] == {"rubric.score": 1} and plan["calls"] == 1  # q1: the one with an answer


def test_a_dry_run_refuses_an_unknown_criterion_as_the_run_does(cli, warranty, tmp_path, monkeypatch):
    """The run checks a rubric's criterion before any call; the dry run did not (``KeyError``)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never called: refused first
    args = ("eval", warranty / "dataset.jsonl", "-m", "rubric(criterion='tone')", "--judge", "openai:m", "--no-save")
    run, dry = cli(*args), cli(*args, "--dry-run")
    assert run.exit_code == dry.exit_code != 0 and dry.output == run.output
    assert "rubric: no criterion named 'tone'; known: accuracy, citation_quality, completeness, relevance" in dry.output
