"""``testset generate``: a line while its judge calls are in flight (12 minutes of silence in
the trial)."""

from __future__ import annotations

import inspect
import sys

import pytest

from tests.conftest import one_error_line
from tests.live.test_loop import Watching
from tests.report.test_heartbeat import HeldServer


class Stop(Exception):
    pass


@pytest.mark.slow  # a real HTTP judge call, held until the heartbeat
def test_generation_calls_in_flight_get_a_line(tmp_path, monkeypatch, warranty):
    import ragmeter.testset.generate as generate
    from ragmeter.cli.testset_cmd import generate_command
    from ragmeter.judges import JudgeRequest, load_prompt
    from ragmeter.judges.schemas import VERIFY

    held = HeldServer(lambda text, payload: {"verdicts": [{"id": 1, "verdict": "supported", "sources": ["a"],
                                                           "combined": False, "quote": "x"}]})

    def one_call_then_stop(texts, judge, n, **kwargs):  # stands in for the generation rounds
        judge.run([JudgeRequest(load_prompt("claims.verify"), {"evidence": "[a] x", "claims": "1. x"}, VERIFY,
                                "verdicts")])
        raise Stop

    try:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setattr(generate, "generate_testset", one_call_then_stop)
        err = Watching(held)
        monkeypatch.setattr(sys, "stderr", err)
        options = {name: p.default.default for name, p in inspect.signature(generate_command).parameters.items()}
        options.update(corpus=str(warranty / "corpus.jsonl"), judge="openai:m", n=1, out=str(tmp_path / "t.jsonl"),
                       judge_base_url=held.state.url + "/v1", ledger=str(tmp_path / "l.sqlite"), progress_interval=0.2)
        with pytest.raises(Stop):
            generate_command(**options)
        beats = [line for line in err.getvalue().splitlines() if "in flight" in line]
        assert beats and beats[0].startswith("ragmeter: generating questions: 1 judge call in flight, ")
        assert held.answered_at is not None
    finally:
        held.seen.set()
        held.srv.shutdown()


def test_testset_into_a_folder_that_cannot_be_created_fails_before_any_judge_call(blocked, tmp_path, cli):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "c1", "text": "The R1 has a 12-month warranty."}\n')
    out = blocked / "testset.jsonl"
    r = cli("testset", "generate", "--corpus", corpus, "--judge", "openai:gpt-4o-mini", "-n", "1", "--out", out)
    one_error_line(r, blocked, "--out")
