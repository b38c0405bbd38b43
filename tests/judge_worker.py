"""Subprocess for the kill -9 test: judge N items against the test server, through a ledger."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ragmeter.judges import Judge, OpenAIBackend, RetryPolicy  # noqa: E402
from ragmeter.ledger import Ledger  # noqa: E402
from tests.judge_fixtures import request  # noqa: E402

url, ledger_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
backend = OpenAIBackend("gpt-test", base_url=url + "/v1", api_key="k", concurrency=4,
                        policy=RetryPolicy(max_retries=2, base_delay=0.01))
results = Judge(backend, ledger=Ledger(ledger_path)).run([request(f"item {i}") for i in range(n)])
print(sum(r.ok for r in results))
