"""One judge-spec vocabulary: the backend factory builds exactly the kinds the table lists, and
every command's ``--judge`` help is written from it."""

from __future__ import annotations

import pytest
import typer

from ragmeter.core.judge_specs import KINDS, judge_specs, kind_of
from ragmeter.judges.backends import factory as backend_factory
from ragmeter.judges.transport import JudgeConfigError


def test_the_factory_builds_every_listed_spec_of_its_kind(monkeypatch):
    monkeypatch.setattr("ragmeter.judges.offline.backend.OfflineBackend", lambda path: ("local", path))
    built = {form: backend_factory.make_backend(form.replace("<model>", "m").replace("<file.gguf>", "x.gguf"),
                                                api_key="k")
             for kind in KINDS for form in kind.forms()}
    assert built["local"] == ("local", None) and built["local:<file.gguf>"] == ("local", "x.gguf")
    assert built["openai:<model>"].name == "openai" and built["anthropic:<model>"].name == "anthropic"
    assert built["given"].name == "given"
    assert sorted(built) == sorted(judge_specs().replace(" or ", ", ").split(", "))


@pytest.mark.parametrize("spec", ["gemini:m", "openai", "openai:", "anthropic"])
def test_a_spec_the_table_lacks_is_refused_with_the_table(spec):
    assert kind_of(spec) is None
    with pytest.raises(JudgeConfigError) as caught:
        backend_factory.make_backend(spec)
    assert str(caught.value).endswith(f"use {judge_specs()}")


def test_every_judge_option_lists_the_specs():
    from ragmeter.cli.main import app

    def commands(group):
        for name, command in group.commands.items():
            yield from commands(command) if hasattr(command, "commands") else [(name, command)]

    helps = {name: p.help for name, c in commands(typer.main.get_command(app)) for p in c.params
             if p.name == "judge"}
    assert {"eval", "watch", "generate", "judge-check", "pairwise"} <= set(helps)
    for name, text in helps.items():
        assert judge_specs(remote=True, last=",").split(", ")[0] in text, name
        assert ("anthropic:<model>" in text) and ("local" in text or name == "pairwise"), name
