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


@pytest.mark.parametrize(("spec", "meant"), [
    ("gpt-4o-mini", "'openai:gpt-4o-mini'"),
    ("claude-haiku-4-5", "'anthropic:claude-haiku-4-5'"),
    ("ollama/llama3", "'ollama:llama3' (the local Ollama server) or 'litellm:ollama/llama3'"),
    ("llama3", "'ollama:llama3' (a local Ollama server) or 'openai:llama3' with --judge-base-url"),
    ("azure/my-deployment", "'litellm:azure/my-deployment'"),
    ("bedrock/anthropic.claude-3-5-haiku-20241022-v1:0", "'litellm:bedrock/anthropic.claude-3-5-haiku-20241022-v1:0'"),
    ("vertex_ai:gemini-2.5-flash", "'litellm:vertex_ai/gemini-2.5-flash'"),
    ("openai/gpt-4o", "'openai:gpt-4o'"),
])
def test_a_refused_judge_string_says_what_would_work(spec, meant):
    with pytest.raises(JudgeConfigError) as caught:
        backend_factory.make_backend(spec)
    said = str(caught.value)
    assert said.startswith(f"unknown judge {spec!r}: did you mean {meant}") and said.endswith(f"use {judge_specs()}")


def test_ollama_is_openai_at_the_local_ollama_url(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-ollama")
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    backend = backend_factory.make_backend("ollama:llama3")
    assert (backend.name, backend.model, backend.base_url) == ("openai", "llama3", "http://127.0.0.1:11434/v1")
    assert not backend._key  # an OpenAI key is never sent to the local server
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:11500")
    assert backend_factory.make_backend("ollama:llama3").base_url == "http://127.0.0.1:11500/v1"
    assert backend_factory.make_backend("ollama:llama3", base_url="http://box:1/v1").base_url == "http://box:1/v1"
