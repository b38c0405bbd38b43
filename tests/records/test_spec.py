"""``records/spec.py``: a record source from its spec string."""

from __future__ import annotations

import pytest

from ragmeter.core.errors import InvalidParameterError
from ragmeter.records import CallableSource, HttpSource, TableSource, parse_source
from tests.records.test_lookup import needs_mcp
from tests.records_servers import ORDERS


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
