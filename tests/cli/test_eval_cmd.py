"""``ragmeter eval --judge`` end to end over the OpenAI wire protocol (test server on 127.0.0.1)."""

from __future__ import annotations

import json

import pytest

METRICS = "faithfulness,context_recall,factual_correctness,answer_relevancy,context_relevance,recall@5"


@pytest.fixture
def server(seed_server):
    return seed_server


def test_eval_with_an_openai_compatible_judge(cli, warranty, server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-xyz")
    args = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
            "--metrics", METRICS, "--judge", "openai:judge-model", "--judge-base-url", server.url + "/v1",
            "--ledger", tmp_path / "ledger.sqlite"]
    out = cli(*args, "--format", "json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    means = {k: round(v["mean"], 2) for k, v in doc["metrics"].items()}
    assert means == {"faithfulness": 0.6, "context_recall": 0.8, "factual_correctness": 0.6,
                     "answer_relevancy": 1.0, "context_relevance": 0.5, "recall@5": 0.67}
    assert doc["judge"]["calls"] == server.count == 6  # extract + 4 verifications + sentences
    assert doc["metrics"]["faithfulness"]["provenance"]["judge"]["model"] == "judge-model"
    assert "sk-secret-xyz" not in out.stdout
    again = cli(*args)  # the table, from the ledger: no new call
    assert again.exit_code == 0 and server.count == 6
    assert "judge openai:judge-model: 0 calls (0.0 per sample)" in again.stdout


def test_dry_run_calls_nothing(cli, warranty, server, tmp_path):
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--metrics", "faithfulness",
              "--judge", "openai:m", "--judge-base-url", server.url + "/v1", "--ledger", tmp_path / "l.sqlite",
              "--dry-run", "--format", "json")
    plan = json.loads(out.stdout)
    assert plan["calls"] == 2 and server.count == 0  # q1: extract + verify; q2-q6 have no answer: nothing


def test_auth_failure_stops_with_one_line(cli, warranty, server, tmp_path):
    server.queue({"status": 401})
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
              "--metrics", "faithfulness", "--judge", "openai:m", "--judge-base-url", server.url + "/v1",
              "--ledger", tmp_path / "l.sqlite")
    assert out.exit_code == 2 and "refused the credentials" in out.output and "Traceback" not in out.output


def test_cost_and_dollar_budget(cli, warranty, server, tmp_path):
    base = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1", "--metrics",
            "faithfulness", "--judge", "openai:m", "--judge-base-url", server.url + "/v1", "--ledger",
            tmp_path / "l.sqlite"]
    out = cli(*base, "--price-in", "1.0", "--price-out", "2.0")
    assert out.exit_code == 0 and ", about $0.00" in out.stdout
    assert cli(*base, "--budget-usd", "1").exit_code == 2  # prices are needed for a dollar budget
    tiny = cli(*base[:-1], tmp_path / "l2.sqlite", "--price-in", "1000", "--price-out", "1000", "--budget-usd", "0.001")
    assert tiny.exit_code == 2 and "budget of $0.00" in tiny.output
