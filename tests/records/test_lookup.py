"""Record sources: the same facts get the same verdicts through a table, a Python function, an
HTTP records server on 127.0.0.1 and a stdio MCP server started here; lookups that time out,
fail or are refused give cannot-verify (never a crash, never a pass); no lookup ever uses a
method other than GET or a tool outside the allow-list."""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from pathlib import Path

import pytest

from ragmeter.core.errors import InvalidInputError, InvalidParameterError
from ragmeter.records import (
    CallableSource,
    CannotVerify,
    Fact,
    HttpSource,
    MemoryLookupCache,
    RecordLookup,
    RecordValue,
    SqliteLookupCache,
    TableSource,
    check_facts_sync,
    parse_source,
)
from ragmeter.records.facts import fact_counts
from tests.installed import need
from tests.records_servers import ORDERS, documents, start_records_server

HERE = Path(__file__).parent.parent
MCP_SERVER = HERE / "records_mcp_server.py"
WARRANTY_RECORDS = HERE.parent / "examples" / "warranty" / "records.jsonl"

# (fact, expected verdict): the same on every source
CASES = [
    (Fact("ORD-1042", "status", "Shipped"), "pass"),  # case
    (Fact("ORD-1042", "total", "$1,299.00"), "pass"),  # currency symbol, thousands separator, decimals
    (Fact("ORD-1042", "ship_date", "5 October 2026"), "pass"),  # a date written out
    (Fact("ORD-1042", "warranty", "two years"), "pass"),  # number word, unit conversion
    (Fact("ORD-1042", "delivery", "2", "business days"), "fail"),
    (Fact("ORD-1042", "product", "R1"), "fail"),
    (Fact("ORD-2077", "discount", "12.5%"), "pass"),
    (Fact("ORD-2077", "status", "shipped"), "fail"),
    (Fact("ORD-9999", "status", "shipped"), "cannot_verify"),  # no such order
    (Fact("ORD-1042", "colour", "black"), "cannot_verify"),  # no such attribute
    (Fact("ORD-1042", "ship_date", "05/10/2026"), "cannot_verify"),  # 5 October or May 10
]
FACTS = [f for f, _ in CASES]
EXPECTED = [v for _, v in CASES]


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NO_PROXY",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def records_server():
    server, state = start_records_server()
    yield state
    server.shutdown()
    server.server_close()
    assert state.violations == [], f"a lookup used a method other than GET: {state.violations}"


def needs_mcp() -> None:
    need("mcp", "MCP sources need: pip install 'ragmeter[records]'")


def mcp_spec(log: Path, tool: str = "get_order") -> str:
    command = shlex.join([sys.executable, str(MCP_SERVER), str(ORDERS), str(log)])
    return f"mcp:{command}#{tool}"


def verdicts(source, **kw) -> list[str]:
    return [c.verdict for c in check_facts_sync(FACTS, RecordLookup(source, **kw))]


def test_table_verdicts():
    checks = check_facts_sync(FACTS, RecordLookup(TableSource(ORDERS)))
    assert [c.verdict for c in checks] == EXPECTED
    fail = checks[4]
    assert fail.record == RecordValue(5, "business days")
    assert "the record holds 5 business days" in fail.reason
    assert "no record of 'ORD-9999'" in checks[8].reason
    assert "can be read as" in checks[10].reason
    counts = fact_counts(checks)
    assert (counts.passed, counts.failed, counts.unverified) == (5, 3, 3)
    assert counts.rate == 5 / (5 + 3) and counts.coverage == (5 + 3) / 11


def test_python_function_verdicts():
    docs = documents()

    def lookup(entity: str, attribute: str):
        value = docs.get(entity, {}).get(attribute)
        return (value["value"], value["unit"]) if isinstance(value, dict) else value

    async def alookup(entity: str, attribute: str):
        await asyncio.sleep(0)
        return lookup(entity, attribute)

    assert verdicts(CallableSource(lookup)) == EXPECTED
    assert verdicts(CallableSource(alookup)) == EXPECTED


def test_http_verdicts_and_one_get_per_entity(records_server):
    source = parse_source(records_server.url + "/orders/{entity}")
    assert verdicts(source) == EXPECTED
    methods = {r["method"] for r in records_server.requests}
    assert methods == {"GET"}
    paths = sorted(r["path"] for r in records_server.requests)
    assert paths == ["/orders/ORD-1042", "/orders/ORD-2077", "/orders/ORD-9999"]  # attributes share a reply


def test_http_pointer_forms(records_server):
    url = records_server.url + "/orders/{entity}"
    named = parse_source(url + "#state=/status,item=/product")
    checks = check_facts_sync([Fact("ORD-1042", "state", "shipped"), Fact("ORD-1042", "item", "R2"),
                               Fact("ORD-1042", "status", "shipped")], RecordLookup(named))
    assert [c.verdict for c in checks] == ["pass", "pass", "cannot_verify"]
    assert "no pointer is configured for attribute 'status'" in checks[2].reason
    templated = parse_source(url + "#/total/{attribute}")
    checks = check_facts_sync([Fact("ORD-1042", "value", "1299"), Fact("ORD-1042", "unit", "usd")],
                              RecordLookup(templated))
    assert [c.verdict for c in checks] == ["pass", "pass"]


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


def test_http_failures_are_cannot_verify(records_server):
    records_server.delay = 2.0
    base = records_server.url
    cases = {
        "/slow/{entity}": "timed out",
        "/error/{entity}": "answered 500",
        "/text/{entity}": "not JSON",
        "/redirect/{entity}": "redirects are not followed",
    }
    for path, words in cases.items():
        checks = check_facts_sync([Fact("ORD-1042", "status", "shipped")],
                                  RecordLookup(HttpSource(base + path, timeout_s=0.3)))
        assert [c.verdict for c in checks] == ["cannot_verify"], path
        assert words in checks[0].reason, (path, checks[0].reason)
    refused = check_facts_sync([Fact("X", "status", "shipped")],
                               RecordLookup(HttpSource("http://127.0.0.1:9/orders/{entity}", timeout_s=1)))
    assert refused[0].verdict == "cannot_verify" and "failed: ConnectError" in refused[0].reason
    assert all(r["method"] == "GET" for r in records_server.requests)


def test_function_failures_are_cannot_verify():
    def slow(entity, attribute):
        time.sleep(2)
        return "shipped"

    def broken(entity, attribute):
        raise RuntimeError("secret-connection-string")

    def odd(entity, attribute):
        return ["a", "list"]

    facts = [Fact("ORD-1042", "status", "shipped")]
    out = {name: check_facts_sync(facts, RecordLookup(CallableSource(fn), timeout_s=0.2))[0]
           for name, fn in (("slow", slow), ("broken", broken), ("odd", odd))}
    assert {k: c.verdict for k, c in out.items()} == dict.fromkeys(out, "cannot_verify")
    assert "within 0.2 s" in out["slow"].reason
    assert "raised RuntimeError" in out["broken"].reason and "secret" not in out["broken"].reason
    assert "returned list" in out["odd"].reason


def test_proxy_from_the_environment_is_used(records_server, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", records_server.url)
    source = HttpSource("http://records.invalid/orders/{entity}")
    checks = check_facts_sync([Fact("ORD-1042", "status", "shipped")], RecordLookup(source))
    assert checks[0].verdict == "pass"
    assert records_server.requests[0]["path"] == "http://records.invalid/orders/ORD-1042"


def test_headers_are_sent_but_never_shown(records_server):
    secret = "Bearer s3cr3t-token"
    source = HttpSource(records_server.url + "/error/{entity}", headers={"Authorization": secret})
    checks = check_facts_sync([Fact("ORD-1042", "status", "shipped")], RecordLookup(source))
    assert records_server.requests[0]["headers"]["Authorization"] == secret
    assert secret not in checks[0].reason and secret not in source.identity
    with_key = HttpSource("http://user:pw@host.invalid/o/{entity}?api_key=zzz")
    assert "pw" not in with_key.identity and "zzz" not in with_key.identity


def test_cache_keeps_final_answers_only(tmp_path):
    calls: list[tuple[str, str]] = []
    state = {"down": True}

    def lookup(entity, attribute):
        calls.append((entity, attribute))
        if entity == "ORD-1" and state["down"]:
            raise ConnectionError("down")
        return {"ORD-1": "shipped", "ORD-2": "processing"}.get(entity)

    cache = SqliteLookupCache(tmp_path / "ledger.sqlite")
    facts = [Fact("ORD-1", "status", "shipped"), Fact("ORD-2", "status", "processing"),
             Fact("ORD-3", "status", "shipped")]
    first = check_facts_sync(facts, RecordLookup(CallableSource(lookup, identity="fn"), cache=cache))
    assert [c.verdict for c in first] == ["cannot_verify", "pass", "cannot_verify"]
    assert len(cache) == 2  # the value and the "no record"; the failure is not stored
    state["down"] = False
    calls.clear()
    second = check_facts_sync(facts, RecordLookup(CallableSource(lookup, identity="fn"),
                                                  cache=SqliteLookupCache(tmp_path / "ledger.sqlite")))
    assert [c.verdict for c in second] == ["pass", "pass", "cannot_verify"]
    assert calls == [("ORD-1", "status")]  # only the failed lookup is asked again
    other = RecordLookup(CallableSource(lookup, identity="another source"), cache=cache)
    check_facts_sync(facts[:1], other)
    assert other.stats.asked == 1  # the key holds the source identity
    memory = MemoryLookupCache()
    check_facts_sync(facts, RecordLookup(CallableSource(lookup, identity="fn"), cache=memory))
    assert len(memory) == 3


def test_cache_age_limit(tmp_path):
    cache = SqliteLookupCache(tmp_path / "c.sqlite", max_age_s=0.05)
    cache.put(key="k", source="s", entity="e", attribute="a", outcome=RecordValue("x"))
    assert cache.get("k") is not None
    time.sleep(0.1)
    assert cache.get("k") is None
    cache.put(key="k", source="s", entity="e", attribute="a", outcome=RecordValue("y"))
    assert cache.get("k").outcome == RecordValue("y")


def test_table_layouts_and_errors(tmp_path):
    wide = tmp_path / "wide.csv"
    wide.write_text("entity,status,Ship Date\nORD-1,shipped,2026-10-05\nORD-2,,2026-11-01\n")
    t = TableSource(wide)
    assert t.attributes == ("ship_date", "status")
    assert t.lookup_now(" ord-1 ", "ship-date") == RecordValue("2026-10-05")
    assert t.lookup_now("ORD-2", "status").kind == "no_record"
    long = tmp_path / "long.csv"
    long.write_text("entity,attribute,value,unit\nORD-1,total,12.50,EUR\n")
    assert TableSource(long).lookup_now("ORD-1", "total") == RecordValue("12.50", "EUR")
    clash = tmp_path / "clash.jsonl"
    clash.write_text('{"entity": "A", "attribute": "s", "value": 1}\n{"entity": "A", "attribute": "s", "value": 2}\n')
    with pytest.raises(InvalidInputError, match=r"clash.jsonl, line 2.*'1' on line 1 and '2' here"):
        TableSource(clash)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"entity": "A", "attribute": "s", "value": [1]}\n')
    with pytest.raises(InvalidInputError, match='line 1, field "value"'):
        TableSource(bad)
    with pytest.raises(InvalidInputError, match="no such records file"):
        TableSource(tmp_path / "missing.jsonl")
    with pytest.raises(InvalidInputError, match='no "entity" column'):
        (tmp_path / "h.csv").write_text("id,status\n1,x\n")
        TableSource(tmp_path / "h.csv")


@pytest.mark.parametrize(("name", "text", "where", "column"), [
    ("attr.jsonl", '{"entity": "R1", "attribute": "warranty", "value": 12}\n'
                   '{"entity": "R2", "attr": "replacement_price", "value": 99}\n', "line 2", "attr"),
    ("case.jsonl", '{"entity": "R2", "Attribute": "replacement_price", "value": 99}\n', "line 1", "Attribute"),
    ("none.jsonl", '{"entity": "R2", "value": 99, "unit": "USD"}\n', "line 1", "attribute"),
    ("attr.csv", "entity,Attr,value,unit\nR2,replacement_price,99,USD\n", "line 1", "attr"),
])
def test_a_long_row_with_a_misnamed_attribute_column_is_an_error_not_a_wide_row(tmp_path, name, text, where, column):
    """A long row whose "attribute" column is misnamed used to be read as one row per entity (an
    attribute called "value"), so every lookup was "no record"; it now names the file, the line,
    the column and the fix."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InvalidInputError) as caught:
        TableSource(path)
    message = str(caught.value)
    assert message.startswith(f'{path}, {where}, field "{column}"') and "did you mean attribute" in message
    assert caught.value.field == column


def test_both_table_layouts_still_read_beside_the_misnamed_column_check(tmp_path):
    wide = tmp_path / "wide.jsonl"  # one row per entity, a {"value", "unit"} cell: not a long row
    wide.write_text('{"entity": "R2", "replacement_price": {"value": 99, "unit": "USD"}, "colour": "red"}\n')
    assert TableSource(wide).lookup_now("R2", "replacement_price") == RecordValue(99, "USD")
    assert TableSource(WARRANTY_RECORDS).lookup_now("R2", "replacement_price") == RecordValue(99, "USD")


def test_table_identity_follows_content(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"entity": "A", "attribute": "s", "value": 1}\n')
    before = TableSource(path).identity
    path.write_text('{"entity": "A", "attribute": "s", "value": 2}\n')
    assert TableSource(path).identity != before


def test_spec_parser():
    assert isinstance(parse_source(str(ORDERS)), TableSource)
    assert isinstance(parse_source(f"table:{ORDERS}"), TableSource)
    http = parse_source("https://h.example/o/{entity}#status=/s,product=/items/0/sku")
    assert isinstance(http, HttpSource) and http.pointers == {"status": "/s", "product": "/items/0/sku"}
    assert http.identity == "http:GET https://h.example/o/{entity}#product=/items/0/sku,status=/s"
    fn = parse_source("python:tests.records_servers:documents")
    assert isinstance(fn, CallableSource) and fn.identity == "python:tests.records_servers:documents"
    bad = ["", "orders.xlsx", "ftp://h/{entity}", "http://h/orders", "http://h/{entity}/{other}",
           "http://h/{entity}#status", "python:nomodule_xyz:f", "python:os", "mcp:python server.py",
           "mcp:#get_order", "http://h/{entity}#/a~2b{x}"]
    for spec in bad:
        with pytest.raises(InvalidParameterError):
            parse_source(spec)


def test_spec_parser_mcp_forms():
    needs_mcp()
    from ragmeter.records import McpSource

    s = parse_source("mcp:python 'my server.py' --ro#get_order(order_id={entity})#/order/{attribute}")
    assert isinstance(s, McpSource)
    assert s.argv == ["python", "my server.py", "--ro"] and s.tool == "get_order"
    assert s.arguments == {"order_id": "{entity}"} and s.pointer == "/order/{attribute}"
    assert s.allowed_tools == ("get_order",)
    assert s.arguments_for("ORD-1", "status") == {"order_id": "ORD-1"}


def test_lookup_never_raises_on_bad_input():
    lookup = RecordLookup(TableSource(ORDERS))
    out = lookup.run([("", "status"), ("ORD-1042", " "), ("ORD-1042", "status")])
    assert [type(o).__name__ for o in out] == ["CannotVerify", "CannotVerify", "RecordValue"]
    assert lookup.stats.as_dict()["failed"] == 2


def test_the_get_only_server_catches_other_methods():
    """The guard the other HTTP tests rely on: any other method is recorded as a violation."""
    import httpx

    server, state = start_records_server()
    try:
        for method in ("POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"):
            httpx.request(method, state.url + "/orders/ORD-1042", trust_env=False)
        assert [v.split()[0] for v in state.violations] == ["POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    finally:
        server.shutdown()
        server.server_close()
