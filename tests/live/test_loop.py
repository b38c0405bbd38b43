"""``watch``: a line while judge calls are in flight (no silence during a long call), a pass
that computed nothing says so instead of "scored N new", and the watcher scores at the
settings' cut-off (it was k=5 whatever the settings said)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from ragmeter.core.settings import Settings, WatchSettings
from ragmeter.live import loop
from ragmeter.live.loop import make_watcher
from tests import live_judge
from tests.report.test_heartbeat import HeldServer


class Watching(io.StringIO):
    """stderr that tells the held server when a heartbeat line is written."""

    def __init__(self, held: HeldServer) -> None:
        super().__init__()
        self.held = held

    def write(self, text: str) -> int:
        if "in flight" in text:
            self.held.seen.set()
        return super().write(text)


@pytest.mark.slow  # real HTTP judge calls, held until the heartbeat
def test_watch_prints_a_line_while_a_judge_call_is_in_flight(tmp_path, monkeypatch):
    held = HeldServer()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        err = Watching(held)
        monkeypatch.setattr(sys, "stderr", err)
        log = tmp_path / "req.jsonl"
        log.write_text(live_judge.request_line(0))
        watch = WatchSettings(log=str(log), state=str(tmp_path / "s"), port=0, once=True, metrics=("faithfulness",))
        settings = Settings(judge="openai:m", judge_base_url=held.state.url + "/v1", watch=watch,
                            progress_interval=0.2)
        said: list[str] = []
        assert loop.run_watch(settings, said.append) == 0
        beats = [line for line in err.getvalue().splitlines() if "in flight" in line]
        assert beats and beats[0].startswith("ragmeter: scoring new requests: 1 judge call in flight, ")
        assert held.answered_at is not None
        assert any(line.startswith("scored 1 new") for line in said)
    finally:
        held.seen.set()
        held.srv.shutdown()


def test_a_pass_that_computed_nothing_does_not_say_scored(tmp_path):
    """``watch --once --judge none`` printed "scored 2 new" when nothing was computed."""
    log = tmp_path / "req.jsonl"
    log.write_text("".join(live_judge.request_line(i) for i in range(2)))
    said: list[str] = []
    watch = WatchSettings(log=str(log), state=str(tmp_path / "s"), port=0, once=True)
    assert loop.run_watch(Settings(judge="none", watch=watch), said.append) == 0
    assert said[0].startswith("read 2 new, nothing computed; last 100: faithfulness not computed on 2 (needs a judge")
    # with a value in the window the head stays "scored N new" (tests/core/test_settings.py, a judged watch)


def test_the_watcher_resolves_its_measures_at_the_settings_k(tmp_path):
    log = tmp_path / "requests.jsonl"
    log.write_text("")
    for k, names in ((3, ["ndcg@3", "recall@3"]), (None, ["ndcg", "recall"])):
        settings = Settings(k=k, judge="none", watch=WatchSettings(log=str(log), state=str(tmp_path / f"s{k}"),
                                                                    metrics=("ndcg", "recall"), port=0))
        assert make_watcher(settings).names == names


def _watch_once(tmp_path, port: int) -> list[str]:
    import ragmeter.live.loop as loop
    from ragmeter.core.settings import Settings, WatchSettings
    from tests import live_judge

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


def test_watch_once_with_nothing_new_says_so(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A second ``watch --once`` on the same log printed nothing at all and exited 0."""
    log = tmp_path / "requests.jsonl"
    log.write_text(json.dumps({"request_id": "r1", "question": "How long is the R1 warranty?",
                               "answer": "12 months.", "retrieved": [{"id": "c1", "text": "12 months."}]}) + "\n",
                   encoding="utf-8")
    args = ("watch", log, "--once", "--judge", "none", "--metrics", "ndcg@10", "--state", tmp_path / "state")
    first = cli(*args)
    # ndcg needs labels the log has none of: "scored 1 new" said otherwise before (issue 31)
    assert first.exit_code == 0 and "read 1 new, nothing computed" in first.output and "no new line" not in first.output
    again = cli(*args)
    assert again.exit_code == 0
    state = tmp_path / "state"
    assert again.output.strip() == f"no new line in {log} since the last pass (its offset is kept in {state})"


def test_without_prometheus_client_the_default_endpoint_names_the_extra_not_port(tmp_path, cli, monkeypatch):
    """A core install: ``watch --otlp 4319 --judge none`` blamed --port, which was never given."""
    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # as when [live] is not installed
    done = cli("watch", "--otlp", "127.0.0.1:0", "--judge", "none", "-m", "hit_rate@3", "--state", tmp_path / "s")
    assert done.exit_code == 2, done.output
    assert "--port" not in done.output.replace("--port 0 turns it off", "")
    assert done.output.strip() == (
        "error: the Prometheus /metrics endpoint that watch serves (on port 9464 unless --port 0 turns it off) needs "
        "prometheus_client, which the core install leaves out. Fix: pip install 'ragmeter[live]'")
    chosen = cli("watch", "--otlp", "127.0.0.1:0", "--judge", "none", "--port", "9999", "--state", tmp_path / "s")
    assert chosen.exit_code == 2 and "Invalid value for --port" in chosen.output  # the port the user chose
    assert "needs prometheus_client" in chosen.output
