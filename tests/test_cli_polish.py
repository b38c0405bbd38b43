"""Rough edges a new-user trial found in the CLI: an output folder that cannot be created is one
error line (not a traceback); ``eval --dry-run`` speaks to a person under ``--format table``;
``compare`` shows a direction only when the change is significant; ``watch`` picks its judge as
``eval`` does; the agreement and correlate lines read well."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_collection_import import beir_dir  # noqa: F401  (a fixture)
from .test_label_agreement import _labeled


@pytest.fixture
def blocked(tmp_path: Path) -> Path:
    """A path whose parent is a regular file: no folder can ever be created there."""
    (tmp_path / "a-file").write_text("x")
    return tmp_path / "a-file" / "sub"


def _one_error_line(r, path: Path, option: str) -> None:
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.output
    assert str(path) in lines[0] and f"choose another with {option}" in lines[0], r.output
    assert "Traceback" not in r.output


def test_import_into_a_folder_that_cannot_be_created_is_one_error_line(beir_dir, blocked, tmp_path, cli):  # noqa: F811
    _one_error_line(cli("import", "beir", beir_dir, "--out", blocked), blocked, "--out")
    (tmp_path / "collection.tsv").write_text("0\tThe R1.\n")
    (tmp_path / "queries.tsv").write_text("10\tr1\n")
    (tmp_path / "qrels.tsv").write_text("10\t0\t0\t1\n")
    r = cli("import", "msmarco", "--collection", tmp_path / "collection.tsv", "--queries", tmp_path / "queries.tsv",
            "--qrels", tmp_path / "qrels.tsv", "--out", blocked)
    _one_error_line(r, blocked, "--out")
    (tmp_path / "topics.tsv").write_text("10\tr1\n")
    r = cli("import", "trec", "--topics", tmp_path / "topics.tsv", "--qrels", tmp_path / "qrels.tsv", "--out", blocked)
    _one_error_line(r, blocked, "--out")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux's /proc")
def test_import_into_proc_names_the_folder(beir_dir, cli):  # noqa: F811
    _one_error_line(cli("import", "beir", beir_dir, "--out", "/proc/nope"), Path("/proc/nope"), "--out")


def test_testset_into_a_folder_that_cannot_be_created_fails_before_any_judge_call(blocked, tmp_path, cli):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "c1", "text": "The R1 has a 12-month warranty."}\n')
    out = blocked / "testset.jsonl"
    r = cli("testset", "generate", "--corpus", corpus, "--judge", "openai:gpt-4o-mini", "-n", "1", "--out", out)
    _one_error_line(r, blocked, "--out")


def test_label_export_into_a_folder_that_cannot_be_created_is_one_error_line(blocked, tmp_path, cli):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q1", "question": "first?", "retrieved": ["c1", "c2", "c3"]}\n'
                    '{"id": "q2", "question": "second?", "retrieved": ["c3", "c4"]}\n')
    _labeled(tmp_path).close()
    r = cli("label", data, "--labels", tmp_path / "l.jsonl", "--export", blocked / "labeled.jsonl")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"error: {blocked / 'labeled.jsonl'}: cannot create or write the labeled dataset" in r.output
    assert "choose another with --export" in r.output
    r = cli("label", data, "--labels", tmp_path / "l.jsonl", "--qrels", blocked / "l.qrels")
    assert r.exit_code == 2 and "choose another with --qrels" in r.output


# ---- eval --dry-run ---------------------------------------------------------------------------

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


def test_dry_run_text_gives_the_local_judges_time():
    from ragmeter.cli.eval_cmd import dry_run_text

    text = dry_run_text({"calls": 3, "estimated_input_tokens": 900, "max_output_tokens": 6144,
                         "calls_by_prompt": {"claims.extract": 1, "claims.verify": 2}, "note": "n",
                         "estimated_seconds": 22.2, "time_note": "rough", "not_timed": ["rubric.grade"]})
    # the line names no judge now (a served judge's past latencies give one too) and each figure
    # it rests on is listed (tests/engine/test_dry_run.py)
    assert "estimated time: about 22.2 s (rough)" in text
    assert "not timed (left out of the estimate): rubric.grade" in text


# ---- compare's direction column ---------------------------------------------------------------

def test_compare_shows_a_direction_only_for_a_significant_change(cli, tmp_path):
    from .test_compare_gate import make_run

    a = make_run(tmp_path / "a", {"ndcg@5": [0.2, 0.4, 0.6, 0.8]})
    b = make_run(tmp_path / "b", {"ndcg@5": [0.3, 0.5, 0.6, 0.9]})  # 3 of 4 up: p (Holm) = 0.25
    out = cli("compare", a.path, b.path).stdout
    row = next(x for x in out.splitlines() if x.lstrip().startswith("ndcg@5"))
    assert "+0.075 n.s." in row and "^" not in row and "better" not in row.replace("higher", "")
    assert "n.s.: not significant at 0.05 after Holm" in out
    gate = cli("gate", b.path, "--baseline", a.path).stdout
    assert "not significant" in gate
    doc = json.loads(cli("compare", a.path, b.path, "--format", "json").stdout)
    assert set(doc["metrics"][0]) >= {"diff", "p_holm", "higher_is_better"} and "significant" not in doc["metrics"][0]
    c = make_run(tmp_path / "c", {"ndcg@5": [0.5] * 40})
    d = make_run(tmp_path / "d", {"ndcg@5": [0.4] * 40})  # every query down 0.1: p (Holm) < 0.001
    out = cli("compare", c.path, d.path).stdout
    assert "-0.100 v worse" in out and "n.s." not in out


# ---- watch picks its judge as eval does -------------------------------------------------------

@pytest.fixture
def request_log(tmp_path: Path) -> Path:
    log = tmp_path / "requests.jsonl"
    log.write_text(json.dumps({"id": "r1", "question": "How long is the R1 warranty?",
                               "answer": "The R1 has a 12-month warranty.",
                               "contexts": [{"id": "c1", "text": "The R1 has a 12-month warranty."}]}) + "\n")
    return log


def test_watch_without_judge_and_without_the_local_one_says_what_to_pass(request_log, tmp_path, cli, monkeypatch):
    import ragmeter.live.loop as loop

    monkeypatch.setattr(loop, "default_judge", lambda: None)
    r = cli("watch", request_log, "--once", "--port", "0", "--state", tmp_path / "state")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "--judge" in r.output and "need a judge" in r.output and "--judge none" in r.output
    assert not (tmp_path / "state").exists()  # refused before anything was written
    none = cli("watch", request_log, "--judge", "none", "--once", "--port", "0", "--state", tmp_path / "s2")
    assert none.exit_code == 0, none.output


def test_watch_without_judge_takes_the_local_one_when_installed(monkeypatch):
    import ragmeter.live.loop as loop
    from ragmeter.core.settings import Settings, WatchSettings

    monkeypatch.setattr(loop, "default_judge", lambda: "local")
    told: list[str] = []
    auto = Settings(watch=WatchSettings(log="x.jsonl"))
    assert loop.resolve_watch_judge(auto, told.append).judge == "local"
    assert told == ["no --judge given: using the bundled local judge (offline)"]
    given = Settings(judge="openai:m", watch=WatchSettings(log="x.jsonl"))
    assert loop.resolve_watch_judge(given) is given
    unjudged = Settings(watch=WatchSettings(log="x.jsonl", metrics=("ndcg@5",)))
    assert loop.resolve_watch_judge(unjudged).judge == "none"


# ---- agreement and correlate lines ------------------------------------------------------------

def test_agreement_confusion_line_rounds_and_json_keeps_the_values(cli, tmp_path):
    from .test_compare_gate import make_run

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
    from .test_compare_gate import make_run

    one = make_run(tmp_path / "one", {"precision@5": [0.2], "recall@5": [0.1]})
    assert "over 1 query" in cli("correlate", one.path).stdout
    two = make_run(tmp_path / "two", {"precision@5": [0.2, 0.4], "recall@5": [0.1, 0.3]})
    assert "over 2 queries" in cli("correlate", two.path).stdout


def test_a_format_the_command_does_not_have_is_a_usage_error(cli, tmp_path, runs_dir, warranty):
    """compare, gate and diagnose printed their table for ``--format markdwon`` and exited 0 (a typo
    in CI passed unseen); every --format now names its choices."""
    assert cli("eval", warranty / "dataset.jsonl", "--judge", "none").exit_code == 0
    (run,) = [p for p in runs_dir.iterdir() if (p / "setup.json").is_file()]
    for args in (["compare", run, run], ["gate", run, "--baseline", run], ["diagnose", run], ["correlate", run]):
        r = cli(*args, "--format", "markdwon")
        assert r.exit_code == 2 and "markdwon" in r.output, (args, r.output)
    assert cli("gate", run, "--baseline", run, "--format", "markdown").exit_code == 0


def test_a_multi_line_error_keeps_its_lines(cli, runs_dir, warranty):
    """compare's setup-mismatch error printed its line breaks as a literal \\x0a."""
    for k in ("3", "5"):
        assert cli("eval", warranty / "dataset.jsonl", "--judge", "none", "--k", k, "--name", f"k{k}").exit_code == 0
    a, b = sorted(p for p in runs_dir.iterdir() if (p / "setup.json").is_file())
    r = cli("compare", a, b)
    assert r.exit_code == 2 and "not comparable" in r.output, r.output
    assert "\\x0a" not in r.output and len(r.output.strip().splitlines()) > 1, r.output


def test_a_log_line_without_request_id_says_how_to_get_one():
    """A hand-written log (no request_id, or "id") was quarantined line by line with no fix."""
    from ragmeter.live.source import Rejected, parse

    for line in (b'{"question": "q", "answer": "a"}', b'{"id": "r2", "question": "q", "answer": "a"}'):
        rejected = parse(line)
        assert isinstance(rejected, Rejected) and "ragmeter.log_request" in rejected.reason, rejected
