"""The bundled judge price snapshot (core/prices.py): where each spec's model is looked up, how the
flags override it, and that the data is what its NOTICE says."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from ragmeter.core.prices import FLAGS, Price, has_both, judge_price, snapshot, snapshot_price
from ragmeter.core.settings import InvalidSettingError, Settings


@pytest.mark.parametrize(("spec", "model", "price_in", "price_out"), [
    ("openai:gpt-4o-mini", "gpt-4o-mini", 0.15, 0.6),  # LiteLLM's map: 1.5e-07 and 6e-07 USD per token
    ("openai:gpt-4o", "gpt-4o", 2.5, 10.0),
    ("anthropic:claude-haiku-4-5", "claude-haiku-4-5", 1.0, 5.0),
    ("litellm:openai/gpt-4o-mini", "gpt-4o-mini", 0.15, 0.6),  # the provider dropped
    ("litellm:azure/gpt-4o-mini", "azure/gpt-4o-mini", 0.15, 0.6),  # the map's own azure/ key
    ("litellm:bedrock/anthropic.claude-3-5-haiku-20241022-v1:0", "anthropic.claude-3-5-haiku-20241022-v1:0", 0.8, 4.0),
    ("litellm:vertex_ai/gemini-2.5-flash", "gemini-2.5-flash", 0.3, 2.5),
    ("ollama:llama3", "ollama/llama3", 0.0, 0.0),  # a local server
    ("litellm:ollama/llama3", "ollama/llama3", 0.0, 0.0),
])
def test_a_spec_finds_its_model(spec, model, price_in, price_out):
    p = snapshot_price(spec)
    assert p is not None and (p.model, p.input, p.output) == (model, price_in, price_out)
    assert p.source == f"LiteLLM price map {snapshot()['date']}"


@pytest.mark.parametrize("spec", [None, "", "local", "local:model.gguf", "openai:my-own-model", "openai:",
                                  "litellm:ollama/gpt-4o-mini"])
def test_no_price_is_guessed(spec):
    assert snapshot_price(spec) is None and judge_price(spec) is None


def test_each_flag_overrides_its_side():
    assert judge_price("openai:gpt-4o-mini", 1.0, 2.0) == Price(1.0, 2.0, None, FLAGS)
    half = judge_price("openai:gpt-4o-mini", price_in=1.0)
    assert (half.input, half.output, half.model) == (1.0, 0.6, "gpt-4o-mini") and FLAGS in half.source
    # without a snapshot price, a side the flags leave open counts 0 (as judges.cost.usd counts it)
    assert judge_price("openai:my-own-model", price_out=2.0) == Price(0.0, 2.0, None, FLAGS)
    assert has_both("openai:gpt-4o-mini", None, None) and not has_both("openai:my-own-model", 1.0, None)


def test_a_dollar_budget_takes_the_snapshot_or_says_what_is_missing():
    assert Settings(judge="openai:gpt-4o-mini", budget_usd=1.0).judge_price.output == 0.6
    with pytest.raises(InvalidSettingError) as exc:
        Settings(judge="openai:my-own-model", budget_usd=1.0)
    assert exc.value.setting == "budget_usd"
    assert ("--price-in and --price-out (the bundled price snapshot has no price for openai:my-own-model)"
            in str(exc.value))
    with pytest.raises(InvalidSettingError):
        Settings(budget_usd=1.0)  # auto: no judge named, so no price


def test_the_snapshot_is_dated_licensed_and_in_dollars_per_million():
    data = snapshot()
    assert data["date"] == "2026-11-04" and data["licence"].startswith("MIT")
    folder = resources.files("ragmeter.core").joinpath("price_data")
    assert "MIT License" in folder.joinpath("LICENSE").read_text()
    assert "LiteLLM" in folder.joinpath("NOTICE").read_text()
    assert len(data["models"]) > 500
    for name, (price_in, price_out, provider) in data["models"].items():
        assert price_in >= 0 and price_out >= 0 and isinstance(provider, str), name
    # per million tokens, not per token: every OpenAI chat model costs more than $0.01 per million output tokens
    assert all(e[1] > 0.01 for e in data["models"].values() if e[2] == "openai")
    json.dumps(data)
