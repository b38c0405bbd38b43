"""An MCP record server that misbehaves costs its lookups, within the records timeout, with one
located reason: one that hangs at start gives up after ``--records-timeout`` (not a minute),
one that prints what is not JSON-RPC gives one reason naming the first such line (not a
traceback per line), what it spawned is stopped with it (its process group), and what its
stderr holds is redacted (a ``TOKEN=...`` line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ragmeter.records import Fact, RecordLookup, check_facts_sync, parse_source

from ..installed import need

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def _needs_mcp():
    need("mcp", "MCP sources need: pip install 'ragmeter[records]'")


def server(tmp_path: Path, body: str) -> str:
    script = tmp_path / "server.py"
    script.write_text(textwrap.dedent(body))
    return f"mcp:{sys.executable} {script}#get_order"


def check(spec: str, timeout_s: float = 3.0):
    return check_facts_sync([Fact("ORD-1", "status", "shipped")],
                            RecordLookup(parse_source(spec, timeout_s=timeout_s), timeout_s=timeout_s))[0]


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    return state in ("Z", "X")  # a zombie nobody has reaped yet is not running


@pytest.mark.slow
def test_a_server_that_hangs_at_start_gives_up_at_the_records_timeout(tmp_path):
    out = check(server(tmp_path, """
        import sys, time
        sys.stderr.write("starting; ORDERS_TOKEN=tok-9f8e7d6c5b4a\\n"); sys.stderr.flush()
        time.sleep(600)
    """))
    assert out.verdict == "cannot_verify"
    assert "did not start within 3 s" in out.reason, out.reason
    assert "starting" in out.reason and "tok-9f8e7d6c5b4a" not in out.reason, out.reason  # item 16


@pytest.mark.slow
def test_a_server_that_prints_garbage_gives_one_located_reason_and_no_traceback(tmp_path):
    spec = server(tmp_path, """
        import time
        for i in range(50):
            print(f"garbage line {i}", flush=True)
        time.sleep(600)
    """)
    code = textwrap.dedent(f"""
        import json
        from ragmeter.records import Fact, RecordLookup, check_facts_sync, parse_source
        c = check_facts_sync([Fact("ORD-1", "status", "shipped")],
                             RecordLookup(parse_source({spec!r}, timeout_s=3), timeout_s=3))[0]
        print(json.dumps([c.verdict, c.reason]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    verdict, reason = json.loads(done.stdout.strip().splitlines()[-1])
    assert verdict == "cannot_verify"
    assert "stdout line 1 is not a JSON-RPC message: 'garbage line 0' (50 such lines)" in reason, reason
    assert "Traceback" not in done.stderr and "Failed to parse" not in done.stderr, done.stderr[-2000:]


@pytest.mark.slow
def test_what_the_server_spawned_is_stopped_with_it(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    spec = f"mcp:{sys.executable} {HERE / 'mcp_spawning_server.py'} {pid_file}#get_order"
    out = check(spec, timeout_s=30)
    assert out.verdict == "pass", out.reason
    pid = int(pid_file.read_text())
    for _ in range(100):  # the group is signalled before the source closes; reaping may lag a little
        if gone(pid):
            break
        time.sleep(0.1)
    assert gone(pid), f"the server's child {pid} is still running"
