"""``ragmeter.records.mcp_source``: a record tool is called only when it declares itself read-only
(MCP tool annotation ``readOnlyHint: true``) or the user names it safe (``#safe``, ``safe=True``).

The test server (``tests/records_mcp_server.py``) logs every tool call; its ``cancel_order``
writes ``CALL_LOG.cancelled`` and declares nothing, as the server of issue 41's check did (its
``cancel_order`` wrote ORD-1042 when named as the record tool)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ragmeter.records import Fact, McpSource, RecordLookup, check_facts_sync, parse_source
from tests.records.test_lookup import EXPECTED, MCP_SERVER, mcp_spec, needs_mcp, verdicts
from tests.records_servers import ORDERS

pytestmark = pytest.mark.slow  # each test starts the server

NOT_DECLARED = "does not declare itself read-only (MCP tool annotation readOnlyHint: true), so it is not called"


def _calls(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test_a_tool_that_does_not_declare_itself_read_only_is_never_called(tmp_path):
    needs_mcp()
    log = tmp_path / "calls.log"
    checks = check_facts_sync([Fact("ORD-1042", "status", "shipped")],
                              RecordLookup(parse_source(mcp_spec(log, "cancel_order"), timeout_s=30)))
    assert [c.verdict for c in checks] == ["cannot_verify"]
    assert NOT_DECLARED in checks[0].reason and "#cancel_order#safe" in checks[0].reason
    assert "cancel_order" not in _calls(log) and not Path(str(log) + ".cancelled").exists()


def test_a_read_tool_named_safe_is_called_and_its_answers_are_the_same(tmp_path):
    needs_mcp()
    log = tmp_path / "calls.log"
    refused = parse_source(mcp_spec(log, "lookup_order"), timeout_s=30)
    assert set(verdicts(refused, timeout_s=40)) == {"cannot_verify"} and _calls(log) == []
    named = parse_source(mcp_spec(log, "lookup_order") + "#safe", timeout_s=30)
    assert named.identity.endswith("#lookup_order#safe")  # the user's word is in the provenance
    assert verdicts(named, timeout_s=40) == EXPECTED
    assert set(_calls(log)) == {"lookup_order"}


def test_a_tool_that_declares_it_writes_is_refused_even_when_named_safe(tmp_path):
    needs_mcp()
    log = tmp_path / "calls.log"
    argv = [sys.executable, str(MCP_SERVER), str(ORDERS), str(log)]
    for source in (parse_source(mcp_spec(log, "purge_order") + "#safe", timeout_s=30),
                   McpSource(argv, tool="purge_order", safe=True, timeout_s=30)):
        checks = check_facts_sync([Fact("ORD-1042", "status", "shipped")], RecordLookup(source))
        assert [c.verdict for c in checks] == ["cannot_verify"] and "declares that it changes data" in checks[0].reason
    assert _calls(log) == [] and not Path(str(log) + ".cancelled").exists()


def test_safe_with_a_pointer_and_arguments_parses():
    needs_mcp()
    source = parse_source("mcp:python server.py#lookup_order(order_id={entity})#/order/{attribute}#safe")
    assert (source.tool, source.safe, source.pointer, source.arguments) == (
        "lookup_order", True, "/order/{attribute}", {"order_id": "{entity}"})
    assert parse_source("mcp:python server.py#get_order").safe is False
