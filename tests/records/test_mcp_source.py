"""``records/mcp_source.py``: an MCP server as the system of record: verdicts, the tool allow-list,
and failures that are cannot-verify (the helpers are test_lookup.py's, shared by every source); and
a record tool is called only when it declares itself read-only (MCP tool annotation
``readOnlyHint: true``) or the user names it safe (``#safe``, ``safe=True``).

The test server (``tests/records_mcp_server.py``) logs every tool call; its ``cancel_order``
writes ``CALL_LOG.cancelled`` and declares nothing, as the server of issue 41's check did (its
``cancel_order`` wrote ORD-1042 when named as the record tool)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from ragmeter.core.errors import InvalidParameterError
from ragmeter.records import CannotVerify, Fact, McpSource, RecordLookup, RecordValue, check_facts_sync, parse_source
from tests.records.test_lookup import EXPECTED, MCP_SERVER, mcp_spec, needs_mcp, verdicts
from tests.records_servers import ORDERS


@pytest.mark.slow
def test_mcp_verdicts_and_allow_list(tmp_path):
    needs_mcp()
    log = tmp_path / "calls.log"
    source = parse_source(mcp_spec(log), timeout_s=20)
    assert verdicts(source, timeout_s=30) == EXPECTED
    called = log.read_text().split()
    assert set(called) == {"get_order"} and len(called) == 3  # one call per entity, nothing else
    assert not Path(str(log) + ".cancelled").exists()


@pytest.mark.slow
def test_mcp_tool_outside_the_allow_list_is_never_called(tmp_path):
    needs_mcp()
    from ragmeter.records import McpSource

    log = tmp_path / "calls.log"
    argv = [sys.executable, str(MCP_SERVER), str(ORDERS), str(log)]
    with pytest.raises(InvalidParameterError, match="not in the allow-list"):
        McpSource(argv, tool="cancel_order", allowed_tools=["get_order"])
    source = McpSource(argv, tool="get_order", allowed_tools=["get_order"])

    async def main():
        try:
            first = await source.lookup("ORD-1042", "status")
            refused = await source._call("cancel_order", {"order_id": "ORD-1042"})  # even from inside
            return first, refused
        finally:
            await source.aclose()

    first, refused = asyncio.run(main())
    assert first == RecordValue("shipped")
    assert isinstance(refused, CannotVerify) and refused.kind == "refused"
    assert log.read_text().split() == ["get_order"]
    assert source.calls == ["get_order"]
    assert not Path(str(log) + ".cancelled").exists()


@pytest.mark.slow
def test_mcp_failures_are_cannot_verify(tmp_path):
    needs_mcp()
    log = tmp_path / "calls.log"
    facts = [Fact("ORD-1042", "status", "shipped")]

    slow = check_facts_sync(facts, RecordLookup(parse_source(mcp_spec(log, "slow_order"), timeout_s=1.0,
                                                             start_timeout_s=60), timeout_s=5))
    failing = check_facts_sync(facts, RecordLookup(parse_source(mcp_spec(log, "failing_order"))))
    missing = check_facts_sync(facts, RecordLookup(parse_source(mcp_spec(log, "no_such_tool"))))
    dead = check_facts_sync(facts, RecordLookup(parse_source(f"mcp:{sys.executable} -c 'import sys; "
                                                             f"sys.stderr.write(\"boom\"); sys.exit(3)'#get_order")))
    for checks in (slow, failing, missing, dead):
        assert [c.verdict for c in checks] == ["cannot_verify"]
    assert "timed out" in slow[0].reason
    assert "failing_order(order_id='ORD-1042') answered with an error" in failing[0].reason
    assert "offers no tool 'no_such_tool'" in missing[0].reason
    assert "could not be started" in dead[0].reason and "boom" in dead[0].reason
    assert "cancel_order" not in log.read_text()


NOT_DECLARED = "does not declare itself read-only (MCP tool annotation readOnlyHint: true), so it is not called"


def _calls(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


@pytest.mark.slow
def test_a_tool_that_does_not_declare_itself_read_only_is_never_called(tmp_path):
    needs_mcp()
    log = tmp_path / "calls.log"
    checks = check_facts_sync([Fact("ORD-1042", "status", "shipped")],
                              RecordLookup(parse_source(mcp_spec(log, "cancel_order"), timeout_s=30)))
    assert [c.verdict for c in checks] == ["cannot_verify"]
    assert NOT_DECLARED in checks[0].reason and "#cancel_order#safe" in checks[0].reason
    assert "cancel_order" not in _calls(log) and not Path(str(log) + ".cancelled").exists()


@pytest.mark.slow
def test_a_read_tool_named_safe_is_called_and_its_answers_are_the_same(tmp_path):
    needs_mcp()
    log = tmp_path / "calls.log"
    refused = parse_source(mcp_spec(log, "lookup_order"), timeout_s=30)
    assert set(verdicts(refused, timeout_s=40)) == {"cannot_verify"} and _calls(log) == []
    named = parse_source(mcp_spec(log, "lookup_order") + "#safe", timeout_s=30)
    assert named.identity.endswith("#lookup_order#safe")  # the user's word is in the provenance
    assert verdicts(named, timeout_s=40) == EXPECTED
    assert set(_calls(log)) == {"lookup_order"}


@pytest.mark.slow
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
