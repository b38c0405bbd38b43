"""``ragmeter.report.terminal``: Terminal views of saved runs: the run list, one run's summary, the diagnosis."""

from __future__ import annotations

import json

import pytest

from ragmeter.runs import list_runs


def test_a_dataset_with_nothing_retrieved_says_why_its_rank_metrics_are_0(cli, warranty, tmp_path):
    """Questions imported without a run (or a generated test set) have no retrieved lists: every
    rank metric is 0, and the command says why and what to give, instead of a silent table of 0s."""
    data = tmp_path / "questions.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "R2 warranty?", "relevant": {"d1": 1}}) + "\n")
    out = cli("eval", data, "--no-save")
    assert out.exit_code == 0, out.output
    assert "precision@5 0.000" in out.stdout
    assert "no sample has a retrieved list" in out.stderr and "ragmeter.evaluate_retriever" in out.stderr
    assert "retrieved list" not in cli("eval", warranty / "dataset.jsonl", "--no-save").stderr


EVIL_IDS = ["q\x1b]0;pwned\x07", "[red]x[/red]", "=HYPERLINK(\"http://evil\",\"y\")", "a\rb\u202ec", "@SUM(1)"]


@pytest.fixture
def evil_data(tmp_path):
    p = tmp_path / "evil.jsonl"
    rows = [{"id": sid, "question": "Q?", "retrieved": ["a", "b"], "relevant": ["a"], "answer": "x",
             "metadata": {"expected_format": {"regex": "x"}}} for sid in EVIL_IDS]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _clean(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text and "\u202e" not in text, repr(text)


def test_table_show_runs_and_diagnose_print_ids_escaped_and_literally(cli, evil_data, runs_dir):
    out = cli("eval", evil_data, "--judge", "none", "-m", "recall,precision")
    assert out.exit_code == 0, out.output
    _clean(out.stdout)
    assert "q\\x1b]0;pwned\\x07" in out.stdout and "[red]x[/red]" in out.stdout
    (run,) = list_runs(runs_dir)
    for args in (["show", run.path], ["runs", runs_dir], ["diagnose", run.path]):
        shown = cli(*args)
        assert shown.exit_code == 0, shown.output
        _clean(shown.stdout)
    assert "[red]x[/red]" in cli("diagnose", run.path).stdout
    cmp = cli("compare", run.path, run.path)
    assert cmp.exit_code == 0, cmp.output
    _clean(cmp.stdout)


def test_rich_tables_never_parse_markup_from_data(cli, evil_data, runs_dir, tmp_path):
    assert cli("eval", evil_data, "--judge", "none", "-m", "recall", "--name", "a").exit_code == 0
    worse = tmp_path / "worse.jsonl"
    worse.write_text(evil_data.read_text().replace('["a", "b"]', '["c", "b"]'))
    assert cli("eval", worse, "--judge", "none", "-m", "recall", "--name", "b").exit_code == 0
    a, b = sorted(list_runs(runs_dir), key=lambda r: r.name)
    out = cli("compare", a.path, b.path)
    assert out.exit_code == 0, out.output
    assert "[red]x[/red] -1.00" in out.stdout, out.stdout  # the mover's id, printed literally
    _clean(out.stdout)


def test_error_messages_escape_the_id(cli, tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps({"id": "q\x1b[2J", "retrieved": "a,b"}) + "\n")
    out = cli("eval", p, "--no-save", "--judge", "none")
    assert out.exit_code == 2 and "q\\x1b[2J" in out.output
    _clean(out.output)


def test_show_and_a_streamed_run_print_the_verification_coverage(cli, warranty, runs_dir):
    args = ["eval", warranty / "agent_runs.jsonl", "--action-criteria", warranty / "criteria.yaml", "--records",
            warranty / "records.jsonl", "-m", "action_pass_rate", "--judge", "none"]
    streamed = cli(*args, "--block", "2")
    assert streamed.exit_code == 0, streamed.output
    assert "action pass rate 0.500 (verification coverage 0.500: 2 of 4 cases reached a verdict)" in streamed.stdout
    (run,) = list_runs(runs_dir)
    shown = cli("show", run.path).stdout
    assert "action_pass_rate: verification coverage 0.500: 2 of 4 cases reached a verdict" in shown


@pytest.mark.slow  # the offline judge loads the bundled embedder
def test_the_offline_judge_says_judgments_and_its_measured_agreement(cli, warranty, runs_dir):
    """Trial 2, items 7 and 10: the offline judge printed '5 calls ..., 0 re-asks, ..., 0 input +
    0 output tokens' and no agreement line; it makes no model call, and its rule's
    cross-validated accuracy on the agreement set is in its provenance."""
    pytest.importorskip("onnxruntime")
    from ragmeter.judges.offline.rule import load_rule
    from ragmeter.trust.judge_uncertainty import wilson_interval

    cv = load_rule().measured["agreement_leave_one_context_out"]
    lo, hi = wilson_interval(cv["accuracy"] * cv["n"], cv["n"])
    agreement = f"judge agreement {cv['accuracy']:.2f} [{lo:.2f}-{hi:.2f}] on {cv['n']} claims"
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
              "--judge", "local")
    assert out.exit_code == 0, out.output
    assert f"faithfulness: 1 scored, 5 not computed, 0 failed (the sample has no answer: 5); {agreement}" in out.stdout
    assert "judge local: 2 judgments (0.3 per sample; offline evidence, no model call), 0 from the ledger, 0 failed" \
        in out.stdout
    (run,) = list_runs(runs_dir)
    shown = cli("show", run.path).stdout
    assert "judge: 2 judgments (offline evidence, no model call), 0 from the ledger" in shown
    assert f"faithfulness: {agreement} (leave-one-context-out" in shown
