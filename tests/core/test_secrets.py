"""A credential written out in text from outside (an MCP server's stderr ``TOKEN=...``, a URL's
``?api_key=``, an ``Authorization`` header) is masked by the one redaction every stored and
printed text goes through, in results.jsonl and summary.json as in error messages."""

from __future__ import annotations

import json
import sqlite3
import sys
import textwrap

import pytest

from ragmeter.core.secrets import MASK, redact, redact_value, redacted_json_lines
from ragmeter.core.settings import Settings
from ragmeter.runs.driver import run_evaluation

from ..installed import need

WRITTEN = [
    ("server stderr: TOKEN=sekrit-abc123 starting", "TOKEN=***", "sekrit-abc123"),
    ("GET /orders?api_key=k-998877&page=2", "api_key=***&page=2", "k-998877"),
    ("db_password='pa ss word' at boot", "db_password=***", "pa ss word"),
    ("Authorization: Bearer eyJhbGciOi.x.y", "Bearer ***", "eyJhbGciOi"),
    ("MY_SECRET_KEY=\"q u o t e d\"", "MY_SECRET_KEY=***", "q u o t e d"),
]
KEPT = ["max_tokens=100", "input_tokens: 5", "the secret: we ship on time", "a basic plan", "PWD=/srv/app",
        "tokens=3"]


@pytest.mark.parametrize("text, shown, hidden", WRITTEN)
def test_written_out_credentials_are_masked_everywhere(text, shown, hidden):
    for out in (redact(text), redact_value({"reason": [text]})["reason"][0],
                json.loads(next(redacted_json_lines([{"reason": text}])))["reason"]):
        assert shown in out and hidden not in out, out


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_text_is_kept(text):
    assert redact(text) == text
    assert next(redacted_json_lines([{"t": text}])) == json.dumps({"t": text})


def test_masking_twice_changes_nothing():
    once = redact("TOKEN=abc12345 Bearer abcdefgh")
    assert redact(once) == once and once.count(MASK) == 2


@pytest.mark.slow
def test_mcp_stderr_token_never_reaches_the_run_directory(tmp_path):
    need("mcp", "MCP sources need: pip install 'ragmeter[records]'")
    server = tmp_path / "server.py"
    server.write_text(textwrap.dedent("""
        import sys, time
        sys.stderr.write("connecting with TOKEN=tok-5566778899\\n"); sys.stderr.flush()
        time.sleep(600)
    """))
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "s1", "question": "Price?", "answer": "The R2 costs $89.",
                                "metadata": {"facts": [{"entity": "R2", "attribute": "price", "value": "$89"}]}})
                    + "\n")
    settings = Settings(dataset=str(data), metrics=("record_accuracy",), judge="none",
                        records=f"mcp:{sys.executable} {server}#get_order", records_timeout=3,
                        runs_dir=str(tmp_path / "runs"), ledger=str(tmp_path / "ledger.sqlite"))
    run = run_evaluation(settings)
    texts = {p.name: p.read_text() for p in run.run_path.iterdir() if p.is_file()}
    assert "connecting with TOKEN=***" in texts["results.jsonl"], texts["results.jsonl"][:2000]
    assert not [name for name, t in texts.items() if "tok-5566778899" in t]


JUDGED_ARGS = ("--metrics", "recall,faithfulness", "--judge", "openai:m", "--concurrency", "1")


def _runs(runs_dir):
    return sorted(p for p in runs_dir.iterdir() if p.is_dir()) if runs_dir.exists() else []


def test_credentials_never_reach_run_files_or_messages(cli, warranty, runs_dir, seed_server, monkeypatch):
    # a URL with a password and OPENAI_API_KEY at once is refused (tests/judges/backends/test_http.py):
    # the key this process holds is another service's
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ORDERS_API_KEY", "sk-held-KEY-123456")
    url = seed_server.url.replace("http://", "http://alice:hunter2secret@") + "/v1"
    seed_server.queue({}, {"status": 401})
    res = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
              *JUDGED_ARGS, "--judge-base-url", url)
    assert res.exit_code == 2 and "hunter2secret" not in res.output
    (run,) = _runs(runs_dir)
    for f in run.iterdir():
        text = f.read_text() if f.suffix in (".json", ".jsonl") else ""
        assert "hunter2secret" not in text and "sk-held-KEY-123456" not in text
    assert "http://***@127.0.0.1" in (run / "setup.json").read_text()
    with sqlite3.connect(runs_dir / "ledger.sqlite") as db:
        dump = " ".join(map(str, db.execute("SELECT * FROM judgments").fetchall()))
    assert "hunter2secret" not in dump and "sk-held-KEY-123456" not in dump
    again = cli("eval", "--resume", run)
    assert again.exit_code == 2 and "give --judge-base-url again" in again.output
    assert cli("eval", "--resume", run, "--judge-base-url", url).exit_code == 0
