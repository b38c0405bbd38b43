"""``ragmeter.ledger.sqlite``: The judgment ledger: every judgment stored before any metric reads it (SQLite, WAL)."""

from __future__ import annotations

import pytest

from ragmeter.core.errors import StorageError
from ragmeter.ledger import Ledger

JUDGED_ARGS = ("--metrics", "recall,faithfulness", "--judge", "openai:m", "--concurrency", "1")


def test_a_corrupted_ledger_is_a_typed_error_naming_the_file(cli, warranty, runs_dir, seed_server, tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    ledger.write_bytes(b"SQLite format 3\x00" + b"\x13" * 4096)
    with pytest.raises(StorageError) as exc:
        Ledger(ledger).get("k")
    assert str(ledger) in str(exc.value) and "move it aside" in str(exc.value)
    res = cli("eval", warranty / "dataset.jsonl", *JUDGED_ARGS, "--judge-base-url", seed_server.url + "/v1",
              "--ledger", ledger)
    assert res.exit_code == 2 and str(ledger) in res.output and "Fix:" in res.output
