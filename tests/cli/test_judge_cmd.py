"""Issue 29, item 12: ``judge-check`` where every call failed printed ``accuracy 0.000 (0/0 ...),
95% interval 0.00-0.00`` and exited 0; the accuracy is not computed, and the exit status says so."""

from __future__ import annotations

import json

from ragmeter.judges import Judge, ScriptedBackend


def test_every_call_failed_is_not_computed(cli, monkeypatch):
    import ragmeter.judges.judge_factory as factory

    monkeypatch.setattr(factory, "make_judge",
                        lambda *a, **k: Judge(ScriptedBackend(lambda pid, inputs, m: {"not": "a verdict"})))
    out = cli("judge-check", "--judge", "openai:m", "--split", "tune", "--progress", "none")
    assert out.exit_code == 1
    assert "accuracy not computed: every call failed (108 failed)" in out.output
    assert "0.000" not in out.output and "0/0" not in out.output
    out = cli("judge-check", "--judge", "openai:m", "--split", "tune", "--progress", "none", "--format", "json")
    doc = json.loads(out.output)
    assert out.exit_code == 1 and doc["accuracy"] is None and doc["interval95"] is None and doc["failed"] == 108


def test_mtrag_dev_where_every_call_failed_exits_1_and_split_and_ledger_are_checked(cli, monkeypatch, tmp_path):
    """The trial: judge-check --set mtrag-dev exited 0 when every call failed, ignored --split, and
    made a missing --ledger folder."""
    import ragmeter.judges.judge_factory as factory

    monkeypatch.setattr(factory, "make_judge",
                        lambda *a, **k: Judge(ScriptedBackend(lambda pid, inputs, m: {"not": "a reply"})))
    out = cli("judge-check", "--judge", "openai:m", "--set", "mtrag-dev", "--limit", "4", "--progress", "none")
    assert out.exit_code == 1 and "not computed: every call failed" in out.output, out.output
    out = cli("judge-check", "--judge", "openai:m", "--set", "mtrag-dev", "--limit", "4", "--progress", "none",
              "--format", "json")
    assert out.exit_code == 1 and json.loads(out.output)["not_computed"].startswith("every call failed")
    split = cli("judge-check", "--judge", "openai:m", "--set", "mtrag-dev", "--split", "tune")
    assert split.exit_code == 2 and "--split" in split.output
    missing = tmp_path / "no" / "such" / "ledger.sqlite"
    led = cli("judge-check", "--judge", "openai:m", "--ledger", missing)
    assert led.exit_code == 2 and "--ledger" in led.output and not (tmp_path / "no").exists()
