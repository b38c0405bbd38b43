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

from ragmeter.core.errors import InvalidInputError
from ragmeter.records import (
    CallableSource,
    Fact,
    HttpSource,
    RecordLookup,
    RecordValue,
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
