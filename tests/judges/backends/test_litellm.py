"""``litellm:<provider>/<model>`` (judges/backends/litellm.py) against the same local HTTP server the
built-in backends meet: LiteLLM does the wire (OpenAI's chat completions for ``openai/``, Azure's
deployments path and api-version for ``azure/``), and ragmeter keeps the ledger, the retries and
limits, the budget, validation and re-asks. Targets of issue 40: the same scores, call counts and
ledger reuse as ``openai:``, and no connection but to the configured server."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
import time

import pytest

from ragmeter.core.errors import MissingExtraError
from ragmeter.judges import Budget, BudgetExceeded, Decoding, Judge, JudgeConfigError, JudgeTransportError, RetryPolicy
from ragmeter.judges.backends.factory import make_backend
from ragmeter.judges.backends.litellm import LiteLLMBackend
from ragmeter.ledger import Ledger
from tests import judge_server
from tests.conftest import ROOT
from tests.installed import need
from tests.judge_fixtures import answer, request
from tests.judges.backends.test_openai import KEY, ask

pytestmark = pytest.mark.slow  # LiteLLM takes 5 to 15 s to import


@pytest.fixture(autouse=True)
def litellm_installed():
    need("litellm", "pip install 'ragmeter[litellm]'")


@pytest.fixture
def server():
    srv, state = judge_server.start(answer)
    yield state
    srv.shutdown()


def litellm_judge(server, tmp_path=None, *, model="openai/gpt-test", retries=3, timeout=5.0, concurrency=4, **kw):
    base = server.url + ("/v1" if model.startswith("openai/") else "")
    backend = LiteLLMBackend(model, base_url=base, api_key=KEY, concurrency=concurrency,
                             policy=RetryPolicy(max_retries=retries, base_delay=0.01, timeout=timeout))
    ledger = Ledger(tmp_path / "ledger.sqlite") if tmp_path else Ledger(":memory:")
    return Judge(backend, ledger=ledger, **kw)


@pytest.mark.parametrize("model, path", [("openai/gpt-test", "/v1/chat/completions"),
                                         ("azure/my-deployment",
                                          "/openai/deployments/my-deployment/chat/completions?api-version=")])
def test_the_wire_is_litellms_and_the_ledger_ragmeters(server, tmp_path, model, path, monkeypatch):
    monkeypatch.setenv("AZURE_API_VERSION", "2024-10-21")
    judge = litellm_judge(server, tmp_path, model=model)
    j = ask(judge, request("a"))
    assert j.ok and j.value == {"verdicts": [{"id": i, "verdict": "supported"} for i in (1, 2, 3)]}
    assert (j.calls, j.reasks, j.cached) == (1, 0, False) and j.input_tokens > 0
    sent = server.requests[0]
    assert sent["path"].startswith(path)
    p = sent["payload"]
    assert p["temperature"] == 0.0 and p["seed"] == 0 and p["max_tokens"] == 2048
    assert p["response_format"]["type"] == "json_schema" and p["response_format"]["json_schema"]["strict"] is True
    headers = {k.lower(): v for k, v in sent["headers"].items()}
    assert KEY in headers.get("authorization", "") + headers.get("api-key", "")
    again = ask(litellm_judge(server, tmp_path, model=model), request("a"))  # the ledger answers
    assert again.cached and again.value == j.value and server.count == 1
    assert judge.identity["backend"] == "litellm" and judge.identity["model"] == model
    assert judge.identity["wire"] == "litellm 1.108.0"
    judge.ledger.close()
    assert KEY.encode() not in (tmp_path / "ledger.sqlite").read_bytes()


def test_retries_are_ragmeters_and_litellms_are_off(server):
    server.queue({"status": 429, "headers": {"Retry-After": "1"}})
    judge = litellm_judge(server)
    start = time.monotonic()
    assert ask(judge, request("a")).ok and server.count == 2 and time.monotonic() - start >= 0.9
    assert judge.backend.stats["retries"] == 1 and judge.backend.limiter.throttled == 1
    server.queue(*[{"status": 500}] * 10)
    judge = litellm_judge(server, retries=2)
    with pytest.raises(JudgeTransportError, match="litellm: gave up after 3 attempts: HTTP 500"):
        ask(judge, request("b"))
    assert server.count == 2 + 3 and len(judge.ledger) == 0  # three requests: LiteLLM retried none itself


def test_a_slow_reply_is_a_timeout_sent_again_once(server):
    server.queue({"delay": 1.5}, {"delay": 1.5})
    with pytest.raises(JudgeTransportError, match="timed out after 0.5 s, 2 times"):
        ask(litellm_judge(server, timeout=0.5), request("a"))
    assert server.count == 2


@pytest.mark.parametrize("status,words", [(401, "API key"), (404, "model name and the base URL")])
def test_auth_and_not_found_stop_the_run(server, status, words):
    server.queue({"status": status})
    with pytest.raises(JudgeConfigError, match=words) as info:
        ask(litellm_judge(server), request("a"))
    assert server.count == 1 and KEY not in str(info.value)


def test_validation_and_reasks_are_the_judges(server):
    server.queue({"content": "Sure! {verdicts: [1, 2"})
    j = ask(litellm_judge(server), request("a"))
    assert j.ok and (j.calls, j.reasks) == (2, 1)
    assert "not valid JSON" in server.requests[1]["payload"]["messages"][-1]["content"]
    server.queue({"truncate": True})
    assert ask(litellm_judge(server), request("b")).reasks == 1


def test_json_mode_fallback_when_structured_output_is_rejected(server):
    server.queue({"reject_schema": True})
    assert ask(litellm_judge(server), request("a")).ok
    assert [r["payload"]["response_format"]["type"] for r in server.requests] == ["json_schema", "json_object"]
    assert "JSON Schema" in server.requests[1]["payload"]["messages"][0]["content"]


def test_limits_and_budget(server, tmp_path):
    server.delay = 0.05
    judge = litellm_judge(server, concurrency=2)
    assert all(r.ok for r in judge.run([request(f"item {i}") for i in range(8)]))
    assert server.count == 8 and server.max_in_flight <= 2
    judge = litellm_judge(server, tmp_path, concurrency=1, decoding=Decoding(max_tokens=100),
                          budget=Budget(max_tokens=500))
    with pytest.raises(BudgetExceeded, match="budget of 500 tokens"):
        judge.run([request(f"more {i}") for i in range(6)])


def test_a_model_without_its_provider_and_a_missing_extra(monkeypatch):
    with pytest.raises(JudgeConfigError, match="names no provider: use litellm:<provider>/<model>"):
        make_backend("litellm:gpt-4o-mini")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(MissingExtraError, match=r"pip install 'ragmeter\[litellm\]'"):
        make_backend("litellm:azure/x")


def _eval(cli, warranty, ledger, judge, url, *extra):
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m",
              "faithfulness,context_recall,answer_relevancy", "--judge", judge, "--judge-base-url", url,
              "--ledger", ledger, "--format", "json", *extra)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    return {m: s["mean"] for m, s in data["metrics"].items()}, {r["id"]: r["metrics"] for r in data["samples"]}


def test_the_same_scores_calls_and_ledger_reuse_as_openai(cli, warranty, seed_server, tmp_path, monkeypatch):
    """openai:m, litellm:openai/m and litellm:azure/m on the seed's test judge: equal means and
    per-sample outcomes, the same number of requests each, and none on a rerun."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("AZURE_API_KEY", "az-test")
    monkeypatch.setenv("AZURE_API_VERSION", "2024-10-21")
    runs, counts = {}, {}
    for judge, url in (("openai:m", seed_server.url + "/v1"), ("litellm:openai/m", seed_server.url + "/v1"),
                       ("litellm:azure/m", seed_server.url)):
        before = seed_server.count
        runs[judge] = _eval(cli, warranty, tmp_path / f"{judge.replace(':', '-').replace('/', '-')}.sqlite",
                            judge, url)
        counts[judge] = seed_server.count - before
        rerun = _eval(cli, warranty, tmp_path / f"{judge.replace(':', '-').replace('/', '-')}.sqlite", judge, url)
        assert rerun == runs[judge] and seed_server.count - before == counts[judge]  # the ledger answered it all
    assert runs["openai:m"] == runs["litellm:openai/m"] == runs["litellm:azure/m"]
    assert counts["openai:m"] == counts["litellm:openai/m"] == counts["litellm:azure/m"] > 0
    assert runs["openai:m"][0]["faithfulness"] == pytest.approx(0.6 * 1 / 1)  # the seed's q1: 3 of 5 claims
    azure = [r for r in seed_server.requests if "/openai/deployments/m/" in r["path"]]
    assert azure and all("api-version=2024-10-21" in r["path"] for r in azure)


GUARDED = textwrap.dedent('''
    """Every outbound connection and name lookup of a LiteLLM judge run, from before LiteLLM is imported."""
    import json, os, socket, sys
    sys.path.insert(0, {root!r})
    seen = []
    real_connect, real_lookup = socket.socket.connect, socket.getaddrinfo

    def connect(self, address):
        seen.append(["connect", *map(str, address[:1]), *address[1:2]] if isinstance(address, tuple)
                    else ["connect", str(address)])
        return real_connect(self, address)

    def lookup(host, *args, **kwargs):
        seen.append(["lookup", str(host)])
        return real_lookup(host, *args, **kwargs)

    socket.socket.connect, socket.getaddrinfo = connect, lookup
    from tests import judge_server, seed_judge
    from typer.testing import CliRunner
    from ragmeter.cli.main import app

    _, state = judge_server.start(seed_judge.over_http)
    os.environ.update({{"AZURE_API_KEY": "az-test", "AZURE_API_VERSION": "2024-10-21", "OPENAI_API_KEY": "sk-test"}})
    codes = []
    for judge, url in (("litellm:openai/m", state.url + "/v1"), ("litellm:azure/m", state.url)):
        result = CliRunner().invoke(app, ["eval", {data!r}, "--corpus", {corpus!r}, "-m", "faithfulness",
                                          "--judge", judge, "--judge-base-url", url, "--no-save",
                                          "--ledger", ":memory:"], catch_exceptions=False)
        codes.append(result.exit_code)
    print(json.dumps({{"codes": codes, "port": state.url.rsplit(":", 1)[1], "seen": seen, "requests": state.count,
                      "litellm": "litellm" in sys.modules}}))
''')


def test_no_connection_but_to_the_configured_server(warranty, tmp_path):
    """A socket guard installed before anything is imported (a fresh interpreter): every
    connect() goes to the configured 127.0.0.1 server, and no name is looked up (LiteLLM's price
    map stays its bundled copy; no callback, no telemetry)."""
    script = tmp_path / "guarded.py"
    script.write_text(GUARDED.format(root=str(ROOT), data=str(warranty / "dataset.jsonl"),
                                     corpus=str(warranty / "corpus.jsonl")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no proxy, no LiteLLM setting inherited
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["codes"] == [0, 0] and report["litellm"] and report["requests"] == 4
    outbound = [s for s in report["seen"] if s != ["connect", "127.0.0.1", int(report["port"])]]
    assert outbound == [], outbound
    assert ["connect", "127.0.0.1", int(report["port"])] in report["seen"]
