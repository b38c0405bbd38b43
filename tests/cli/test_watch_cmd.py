"""``ragmeter.cli.watch_cmd``: ``ragmeter watch``: score a sample of live traffic (the loop is
:func:`ragmeter.live.loop.run_watch`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import judge_server, live_judge


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


@pytest.mark.slow
def test_exit_on_alert_cli(tmp_path, monkeypatch):
    log = tmp_path / "req.jsonl"
    log.write_text(live_judge.request_line(1, answer="bad"))
    srv, state = judge_server.start(live_judge.over_http)
    try:
        out = subprocess.run([sys.executable, "-m", "ragmeter", "watch", str(log), "--judge", "openai:m",
                              "--judge-base-url", state.url + "/v1", "--state", str(tmp_path / "s"), "--port", "0",
                              "--once", "--alert", "faithfulness<0.5", "--exit-on-alert"],
                             env={**os.environ, "OPENAI_API_KEY": "k"}, capture_output=True, text=True, timeout=60)
        assert out.returncode == 3 and "ALERT: faithfulness rolling mean 0.000 is below 0.5" in out.stderr
    finally:
        srv.shutdown()


def test_a_port_in_use_is_one_error_naming_the_port(request_log, tmp_path, cli):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = cli("watch", request_log, "--judge", "none", "--port", str(port), "--state", tmp_path / "state")
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    said = " ".join(r.output.replace("│", " ").split())  # the error box, unwrapped
    assert f"Invalid value for --port: the /metrics endpoint cannot listen on 127.0.0.1:{port}" in said


def test_watch_takes_a_log_or_otlp_and_says_what_is_wrong(request_log, tmp_path, cli):
    neither = cli("watch", "--judge", "none", "--once", "--port", "0", "--state", tmp_path / "a")
    assert neither.exit_code == 2 and "--otlp [HOST:]PORT" in neither.output and "Traceback" not in neither.output
    both = cli("watch", request_log, "--otlp", "0", "--judge", "none", "--once", "--port", "0", "--state",
               tmp_path / "b")
    assert both.exit_code == 2 and "(not both)" in both.output
    bad = cli("watch", "--otlp", "localhost:http", "--judge", "none", "--once", "--port", "0", "--state",
              tmp_path / "c")
    assert bad.exit_code == 2 and "[HOST:]PORT" in bad.output
    statsd = cli("watch", request_log, "--statsd", "nohost", "--judge", "none", "--once", "--port", "0", "--state",
                 tmp_path / "d")
    assert statsd.exit_code == 2 and "HOST:PORT" in statsd.output


def test_watch_otlp_once_reads_the_spool_and_exits(tmp_path, cli):
    from ragmeter.io.otlp import protobuf_spans
    from ragmeter.live.spool import Spool
    from tests.otel_traces import protobuf_request, rag_trace, recorded

    tracer, exporter = recorded()
    trace = rag_trace(tracer, "q?", [[("a", "text", 0.5)]], "an answer")
    (tmp_path / "state").mkdir()
    spool = Spool(tmp_path / "state" / "spool.sqlite")
    spool.add(list(protobuf_spans(protobuf_request(exporter.get_finished_spans()))), now=0.0)
    spool.close()
    r = cli("watch", "--otlp", "127.0.0.1:0", "--judge", "none", "--once", "--port", "0", "--state",
            tmp_path / "state", "--settle", "0")
    assert r.exit_code == 0, r.output
    assert "OTLP/HTTP traces on http://127.0.0.1:" in r.output
    assert json.loads((tmp_path / "state" / "scored.jsonl").read_text())["id"] == trace


def test_the_alert_command_help_says_it_runs_without_a_shell(cli):
    """The help read "run on an alert, with $RAGMETER_ALERT set", as if the variable were expanded on
    the command line; it is not (no shell), and the help says so and how to give a shell line."""
    import re

    shown = " ".join(re.sub("[│╭╮╰╯─]", " ", cli("watch", "--help").stdout).split())
    assert "run on an alert, without a shell" in shown and "nothing in it is expanded" in shown
    assert "RAGMETER_ALERT" in shown and "sh -c" in shown
