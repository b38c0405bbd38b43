"""``watch``: a line while judge calls are in flight (no silence during a long call), a pass
that computed nothing says so instead of "scored N new", and the watcher scores at the
settings' cut-off (it was k=5 whatever the settings said)."""

from __future__ import annotations

import io
import sys

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
    # with a value in the window the head stays "scored N new" (tests/test_settings.py, a judged watch)


def test_the_watcher_resolves_its_measures_at_the_settings_k(tmp_path):
    log = tmp_path / "requests.jsonl"
    log.write_text("")
    for k, names in ((3, ["ndcg@3", "recall@3"]), (None, ["ndcg", "recall"])):
        settings = Settings(k=k, judge="none", watch=WatchSettings(log=str(log), state=str(tmp_path / f"s{k}"),
                                                                    metrics=("ndcg", "recall"), port=0))
        assert make_watcher(settings).names == names
