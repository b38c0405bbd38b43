"""A judge (or embedder) URL that holds a user and password, given with an API key, is refused
with one message that shows neither secret: httpx sends the URL's userinfo as HTTP Basic auth,
which silently replaced the ``Authorization: Bearer`` key (OpenAI) or went beside it
(Anthropic). A URL with userinfo and no key sends Basic auth, as asked."""

from __future__ import annotations

import pytest

from ragmeter.embeddings.minilm import EmbedderUnavailable
from ragmeter.judges import AnthropicBackend, Judge, JudgeConfigError, JudgeRequest, OpenAIBackend, load_prompt
from ragmeter.judges.schemas import NEEDED_SENTENCES
from ragmeter.ledger import Ledger
from tests import judge_server, seed_judge

PASSWORD, KEY = "pw-secret-123", "sk-real-key-456"
REQUEST = JudgeRequest(load_prompt("context.relevance"), {"question": "q", "sentences": "1. a"}, NEEDED_SENTENCES,
                       "needed_sentences")


@pytest.fixture
def server():
    httpd, state = judge_server.start(seed_judge.over_http)
    yield state
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("backend, path, variable", [(OpenAIBackend, "/v1", "OPENAI_API_KEY"),
                                                      (AnthropicBackend, "", "ANTHROPIC_API_KEY")])
def test_userinfo_and_a_key_are_refused(server, backend, path, variable, monkeypatch):
    url = server.url.replace("http://", f"http://alice:{PASSWORD}@") + path
    for given in ({"api_key": KEY}, {}):
        monkeypatch.setenv(variable, KEY)
        with pytest.raises(JudgeConfigError) as caught:
            backend("m", base_url=url, **given)
        said = str(caught.value)
        assert "holds a user and password, and an API key is set too" in said and variable in said
        assert PASSWORD not in said and KEY not in said and "http://***@127.0.0.1" in said
    assert server.count == 0  # nothing was sent


def test_userinfo_without_a_key_sends_basic_auth(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    url = server.url.replace("http://", f"http://alice:{PASSWORD}@") + "/v1"
    [j] = Judge(OpenAIBackend("m", base_url=url), ledger=Ledger(":memory:")).run([REQUEST])
    assert j.ok and server.requests[-1]["headers"]["Authorization"].startswith("Basic ")


def test_the_openai_embedder_refuses_the_mix_too(monkeypatch):
    from ragmeter.embeddings.backends import OpenAIEmbedder

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(EmbedderUnavailable, match="holds a user and password") as caught:
        OpenAIEmbedder("e", base_url=f"http://bob:{PASSWORD}@127.0.0.1:9/v1")
    assert PASSWORD not in str(caught.value)
