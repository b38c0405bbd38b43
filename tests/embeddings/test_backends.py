"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1, and the options that
shape a score (--embedder, --criteria) on every evaluation path: in memory, --block, Ray."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ragmeter
from ragmeter.core.sample import Sample
from ragmeter.embeddings import CallableEmbedder, make_embedder
from ragmeter.embeddings.minilm import EmbedderUnavailable
from tests import judge_server


@pytest.fixture
def embed_server(monkeypatch):
    srv, state = judge_server.start(lambda text, payload: {"verdicts": []})
    monkeypatch.setenv("OPENAI_BASE_URL", state.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    yield state
    srv.shutdown()


def test_vectors_come_back_in_input_order_normalised_and_batched(embed_server):
    texts = [f"text {i} " + "abc" * (i % 7) for i in range(300)]
    vectors = make_embedder("openai:letters").encode(texts)
    expected = np.array([judge_server._letters(t) for t in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected)  # the server answers each batch in reverse: sorted by index
    posts = [r for r in embed_server.requests if r["path"] == "/v1/embeddings"]
    assert [len(r["payload"]["input"]) for r in posts] == [256, 44]
    assert all(r["payload"]["model"] == "letters" for r in posts)
    assert posts[0]["headers"]["Authorization"] == "Bearer sk-test-secret"


def test_an_http_error_is_a_clear_reason_not_a_traceback(embed_server):
    embed_server.queue({"status": 500})
    with pytest.raises(EmbedderUnavailable, match="HTTP 500"):
        make_embedder("openai:letters").encode(["a"])


def test_the_key_never_reaches_a_score_or_its_provenance(embed_server, warranty):
    data = ragmeter.load_dataset(warranty / "dataset.jsonl")
    result = ragmeter.evaluate(data, ["semantic_similarity"], embedder=make_embedder("openai:letters"))
    text = json.dumps(result.to_dict())
    assert "sk-test-secret" not in text and '"backend": "openai"' in text


def test_embedder_option_applies_to_the_streamed_path_too(embed_server, cli, warranty, tmp_path):
    args = ["eval", warranty / "dataset.jsonl", "-m", "semantic_similarity", "--embedder", "openai:letters",
            "--runs-dir", tmp_path]
    whole = cli(*args, "--name", "whole")
    streamed = cli(*args, "--name", "streamed", "--block", "2")
    assert whole.exit_code == 0 and streamed.exit_code == 0, whole.output + streamed.output
    runs = {p.name.split("-")[-1]: p for p in tmp_path.iterdir() if p.is_dir()}
    results = {name: [json.loads(line) for line in (runs[name] / "results.jsonl").read_text().splitlines()]
               for name in ("whole", "streamed")}
    assert results["whole"] == results["streamed"]
    setup = json.loads((runs["streamed"] / "setup.json").read_text())
    assert "openai" in json.dumps(setup) and "sk-test-secret" not in json.dumps(setup)


def test_criteria_file_applies_to_the_streamed_path_too(cli, warranty, tmp_path):
    """--criteria was read by the in-memory path only: --block fell back to the built-in criteria."""
    def grade(text, payload):  # 9 on the custom criterion, 2 on anything else
        return {"score": 9 if "CRITERION: tone" in text else 2, "reason": "scripted"}

    srv, state = judge_server.start(grade)
    try:
        crit = tmp_path / "criteria.json"
        crit.write_text(json.dumps({"criteria": [{"name": "tone", "description": "Is it polite?", "scale": [0, 10]}]}))
        args = ["eval", warranty / "dataset.jsonl", "-m", "rubric(criterion='tone')", "--criteria", crit,
                "--judge", "openai:m", "--judge-base-url", state.url + "/v1", "--runs-dir", tmp_path / "runs",
                "--format", "json", "--no-save"]
        whole = cli(*args)
        streamed = cli(*args, "--block", "2")
    finally:
        srv.shutdown()
    assert whole.exit_code == 0 and streamed.exit_code == 0, whole.output + streamed.output
    means = json.loads(whole.stdout)["metrics"]["rubric(criterion='tone')"]["mean"]
    streamed_mean = json.loads(streamed.stdout)["metrics"]["rubric(criterion='tone')"]["mean"]
    assert means == streamed_mean == pytest.approx(0.9)


def _sample(answer, reference):
    return Sample(id="s", question="q", retrieved=(), answer=answer, reference=reference)


def test_a_callable_embedder_is_accepted_and_named_but_gives_no_token_scores():
    def bag(texts):
        return [[t.count("a"), t.count("e") + 1] for t in texts]

    r = ragmeter.evaluate([_sample("a cat", "a hat")], ["semantic_similarity", "token_match"], embedder=bag)
    assert r.outcome("semantic_similarity", "s").value == pytest.approx(1.0)
    tm = r.outcome("token_match", "s")
    assert tm.status == "not_computed" and "no token vectors" in tm.reason
    assert CallableEmbedder(bag).identity["model"].endswith("bag")


def test_unknown_embedder_spec_is_a_clear_error():
    with pytest.raises(ragmeter.InvalidParameterError, match="unknown embedder"):
        make_embedder("word2vec")
