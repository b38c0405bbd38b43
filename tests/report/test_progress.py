"""Progress, logging and warnings: a CI-like run (stderr not a terminal) prints plain progress
lines with done/total, calls, cache hits and ETA; ``--progress none`` prints none; label and
embedding stages report progress too; retries and throttling are ``logging`` records; a
measure scored on too few samples gives a ``LowCoverageWarning``."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import ragmeter
from ragmeter.core import settings
from ragmeter.core.errors import LowCoverageWarning, RagmeterWarning
from ragmeter.report.progress import PlainProgress, RichProgress, progress_factory
from tests.judge_fixtures import request
from tests.judges.backends.test_openai import ask, openai_judge

SRC = str(Path(ragmeter.__file__).parent.parent)
PLAIN = re.compile(r"^ragmeter: (.+) (\d+)/(\d+) \(\d+%\)(, \d+ calls, \d+ cached)?, (ETA \d+m?\d*s|done in [\d.]+s)$")


def eval_cli(warranty, server, tmp_path, *extra: str) -> subprocess.CompletedProcess:
    """``ragmeter eval`` in a fresh process with stderr a pipe, as in CI."""
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "sk-test"}
    args = [sys.executable, "-m", "ragmeter", "eval", str(warranty / "dataset.jsonl"), "--corpus",
            str(warranty / "corpus.jsonl"), "-m", "ndcg,faithfulness,context_recall", "--judge", "openai:m",
            "--judge-base-url", server.url + "/v1", "--ledger", str(tmp_path / "ledger.sqlite"), "--no-save", *extra]
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, check=False)


@pytest.mark.slow
def test_a_ci_run_prints_plain_progress_lines(warranty, seed_server, tmp_path):
    done = eval_cli(warranty, seed_server, tmp_path, "--progress-interval", "0")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("ragmeter: ")]
    assert lines and all(PLAIN.match(line) for line in lines), lines
    stages = {PLAIN.match(line).group(1) for line in lines}
    assert {"label metrics (6 samples)", "extracting claims", "verifying claims"} <= stages
    judged = [PLAIN.match(line) for line in lines if "claims" in line]
    assert all(m.group(4) for m in judged)  # calls and cache hits on every judged line
    assert lines[-1].endswith("s") and "done in" in lines[-1]
    assert "\x1b[" not in done.stderr  # no terminal control codes in a log
    assert "q1" in done.stdout and "ragmeter:" not in done.stdout  # the table stays on stdout
    again = eval_cli(warranty, seed_server, tmp_path, "--progress-interval", "0")  # all from the ledger
    assert re.search(r"verifying claims \d+/\d+ \(100%\), 0 calls, [1-9]\d* cached", again.stderr)


@pytest.mark.slow
def test_progress_none_prints_no_progress(warranty, seed_server, tmp_path):
    done = eval_cli(warranty, seed_server, tmp_path, "--progress", "none", "--progress-interval", "0")
    assert done.returncode == 0 and "q1" in done.stdout
    assert not [line for line in done.stderr.splitlines() if line.startswith("ragmeter: ")], done.stderr


def test_a_bad_progress_mode_is_a_usage_error(cli, warranty):
    out = cli("eval", warranty / "dataset.jsonl", "--no-save", "--progress", "sometimes")
    assert out.exit_code == 2 and "--progress" in out.output


def test_plain_lines_come_every_interval_with_an_eta():
    ticks = iter(range(100))
    out = io.StringIO()
    p = PlainProgress(stream=out, interval=3, clock=lambda: float(next(ticks)))
    p.start("stage", 10)  # t = 0
    for i in range(10):
        p.advance(i)  # t = 1 .. 10: a line at 3, 6, 9 and the last at 10
    lines = out.getvalue().splitlines()
    assert lines[0] == "ragmeter: stage 3/10 (30%), ETA 7s"  # 3 s for 3 items: 7 s for the 7 left
    assert lines[1:] == ["ragmeter: stage 6/10 (60%), ETA 4s", "ragmeter: stage 9/10 (90%), ETA 1s",
                         "ragmeter: stage 10/10 (100%), done in 10.0s"]


def test_a_short_stage_prints_nothing():
    out = io.StringIO()
    p = PlainProgress(stream=out, interval=5, clock=lambda: 0.0)
    p.start("quick", 3)
    for i in range(3):
        p.advance(i)
    assert out.getvalue() == ""


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_auto_is_a_bar_on_a_terminal_and_lines_elsewhere():
    assert progress_factory("auto", stream=Tty()) is RichProgress
    assert isinstance(progress_factory("auto", stream=io.StringIO())(None), PlainProgress)
    assert isinstance(progress_factory("plain", stream=Tty())(None), PlainProgress)
    assert progress_factory("none") is None


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def start(self, label: str, total: int) -> None:
        self.events.append(("start", label, total))

    def advance(self, index: int) -> None:
        self.events.append(("advance", index))


def test_label_and_embedding_stages_report_progress(warranty):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    rec = Recorder()

    def embed(texts):
        return [[len(t), t.count(" ") + 1.0] for t in texts]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LowCoverageWarning)
        ragmeter.evaluate(data, ["ndcg", "recall", "semantic_similarity"], embedder=embed, progress=rec)
    starts = [e for e in rec.events if e[0] == "start"]
    texts = len({t for s in data.samples for t in (s.answer, s.reference) if t and t.strip()})
    assert starts == [("start", "label metrics (6 samples)", 2), ("start", "embedding answers and references", texts)]
    assert sum(e[0] == "advance" for e in rec.events) == 2 + texts


def test_retries_and_throttling_are_logged_without_the_key(caplog):
    from tests import judge_server
    from tests.judge_fixtures import answer

    srv, server = judge_server.start(answer)
    try:
        server.queue({"status": 429, "headers": {"Retry-After": "0"}}, {"status": 500})
        with caplog.at_level(logging.WARNING, logger="ragmeter.judges"):
            assert ask(openai_judge(server), request("x")).ok
    finally:
        srv.shutdown()
    records = [r for r in caplog.records if r.name == "ragmeter.judges.transport"]
    messages = [r.getMessage() for r in records]
    assert any("throttled (HTTP 429)" in m and "pausing" in m for m in messages), messages
    assert any("HTTP 500; retry 2 of 3" in m for m in messages), messages
    assert all(r.levelno == logging.WARNING for r in records)
    assert not any("SECRET" in m for m in messages)


def test_low_coverage_warns_and_logs(warranty, caplog):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    wanted = r"faithfulness: scored 0 of 6 samples \(0%\); not scored: needs a judge"
    with caplog.at_level(logging.INFO, logger="ragmeter.engine"), pytest.warns(LowCoverageWarning,
                                                                                match=wanted) as caught:
        ragmeter.evaluate(data, ["ndcg", "faithfulness"])  # no judge: nothing scored
    assert len(caught) == 1 and issubclass(caught[0].category, RagmeterWarning)
    assert caught[0].filename == __file__  # points at the caller's line
    by_level = {r.levelname: r.getMessage() for r in caplog.records if r.name == "ragmeter.engine.coverage"}
    assert by_level["INFO"].startswith("ndcg@5: scored 6 of 6 samples (100%)")
    assert by_level["WARNING"].startswith("faithfulness: scored 0 of 6")


def test_the_coverage_bar_is_a_setting(warranty, monkeypatch):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    monkeypatch.setattr(settings, "DEFAULTS", settings.Settings(min_coverage=0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LowCoverageWarning)
        ragmeter.evaluate(data, ["faithfulness"])  # 0% is not under a 0% bar
    with pytest.raises(settings.InvalidSettingError, match="min_coverage"):
        settings.Settings(min_coverage=1.5)


def test_pairwise_and_judge_check_report_progress(cli):
    from ragmeter.analysis.pairwise import pairwise
    from ragmeter.judges import Judge, ScriptedBackend
    from ragmeter.trust.agreement_set import check, load_set
    from tests.analysis.test_pairwise import _pair_samples

    a, b = _pair_samples()
    rec = Recorder()
    pairwise(a, b, Judge(ScriptedBackend(lambda pid, inputs, m: {"winner": "1", "reason": "first"})), progress=rec)
    assert rec.events[0] == ("start", "comparing answers (both orders)", 24)
    assert sum(e[0] == "advance" for e in rec.events) == 24
    cases = load_set("tune")
    rec = Recorder()
    check(Judge(ScriptedBackend(lambda pid, inputs, m: {"verdicts": []})), cases, progress=rec)
    assert rec.events[0] == ("start", "judging the agreement set", len(cases))
    assert sum(e[0] == "advance" for e in rec.events) == len(cases)
    assert cli("judge-check", "--judge", "openai:m", "--progress", "sometimes").exit_code == 2


def _questions_only(tmp_path: Path) -> Path:
    data = tmp_path / "questions.jsonl"  # imported without a run: no retrieved list anywhere
    data.write_text('{"id": "1", "question": "R2 warranty?", "relevant": {"d1": 1}}\n'
                    '{"id": "2", "question": "R1 price?", "relevant": {"d2": 1}}\n')
    return data


def test_rank_metrics_on_a_dataset_with_nothing_retrieved_warn_at_the_callers_line(warranty, tmp_path):
    """evaluate() used to return rank metrics of 0 in silence when no sample has a retrieved list;
    it now warns (a RagmeterWarning the caller can filter), pointing at the caller's line."""
    data = ragmeter.load_dataset(_questions_only(tmp_path))
    with pytest.warns(ragmeter.NothingRetrievedWarning, match="no sample has a retrieved list") as caught:
        r = ragmeter.evaluate(data, ["precision@5", "mrr@5"])
    assert set(r.means().values()) == {0.0}
    assert len(caught) == 1 and issubclass(caught[0].category, RagmeterWarning)
    assert caught[0].filename == __file__
    assert "ragmeter.evaluate_retriever" in str(caught[0].message)
    with warnings.catch_warnings():  # a dataset that retrieves, label metrics only: silent
        warnings.simplefilter("error", RagmeterWarning)
        ragmeter.evaluate(ragmeter.load_dataset(warranty / "dataset.jsonl"), ["precision@5", "mrr@5"])
    with warnings.catch_warnings(record=True) as unlabeled:  # no labels either: not computed, not "0"
        warnings.simplefilter("always")
        r = ragmeter.evaluate([{"user_input": "q", "response": "a", "reference": "a"}], "ndcg@5,mrr")
    assert set(r.means().values()) == {None}
    assert not [w for w in unlabeled if issubclass(w.category, ragmeter.NothingRetrievedWarning)]


@pytest.mark.slow
def test_the_command_line_says_nothing_retrieved_once(tmp_path):
    """The CLI prints its note under the table and leaves the library's warning out: one line."""
    env = {**os.environ, "PYTHONPATH": SRC, "PYTHONWARNINGS": "default"}
    out = subprocess.run([sys.executable, "-m", "ragmeter", "eval", str(_questions_only(tmp_path)), "--no-save"],
                         capture_output=True, text=True, env=env, timeout=120, check=True)
    assert out.stderr.count("no sample has a retrieved list") == 1, out.stderr
    assert "Warning" not in out.stderr and "note: no sample has a retrieved list" in out.stderr


def test_the_judge_line_counts_requests_after_a_5xx(cli, warranty, seed_server):
    seed_server.queue({"status": 500})
    res = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
              "--metrics", "faithfulness", "--judge", "openai:m", "--concurrency", "1", "--no-save",
              "--judge-base-url", seed_server.url + "/v1")
    assert res.exit_code == 0 and "0 failed" in res.stdout
    calls = seed_server.count - 1
    assert f"judge openai:m: {calls} calls" in res.stdout
    assert f"{seed_server.count} HTTP requests (1 retried after a timeout, 5xx or 429)" in res.stdout
