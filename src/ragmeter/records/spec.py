"""One string names a record source (the future ``--records SOURCE`` option).

| form | source |
|---|---|
| ``records.jsonl``, ``records.csv``, ``table:PATH`` | a table file (:mod:`ragmeter.records.table_source`) |
| ``http://host/orders/{entity}`` | GET, pointer ``/<attribute>`` into the JSON reply |
| ``http://host/orders/{entity}#/data/{attribute}`` | GET, one pointer for every attribute |
| ``http://host/orders/{entity}#status=/status,product=/items/0/sku`` | GET, named attributes only |
| ``mcp:python server.py#get_order`` | a stdio MCP server's tool, arguments from its schema, pointer ``/<attribute>`` |
| ``mcp:python server.py#get_order(order_id={entity})#/order/{attribute}`` | arguments and pointer given |
| ``mcp:python server.py#lookup_order#safe`` | a tool that does not declare itself read-only, named safe by you |
| ``python:mypackage.records:lookup`` | a Python function ``lookup(entity, attribute)`` |

The part after ``#`` never reaches an HTTP server (it is a URL fragment). The MCP tool named
is the only one allow-listed, and it is called only if it declares itself read-only (MCP
annotation ``readOnlyHint: true``) or the string ends with ``#safe``. Headers for an HTTP
source (an API key) are passed to :func:`parse_source`, never written in the string, so the
string can go into provenance.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from ragmeter.core.errors import InvalidParameterError
from ragmeter.records.types import RecordSource

FORMS = ("records.jsonl | records.csv | table:PATH | http(s)://host/path/{entity}[#POINTER | #attr=POINTER,...] | "
         "mcp:COMMAND#TOOL[(arg={entity},...)][#POINTER][#safe] | python:MODULE:FUNCTION")
_TABLE_SUFFIXES = (".jsonl", ".ndjson", ".csv")
_TOOL = re.compile(r"^\s*([A-Za-z0-9_][A-Za-z0-9_.\-/]*)\s*(?:\((.*)\))?\s*$")


def parse_source(spec: str, *, timeout_s: float = 10.0, headers: Mapping[str, str] | None = None,
                 start_timeout_s: float | None = None) -> RecordSource:
    """The record source a spec string names (see the module docstring for the forms).

    ``timeout_s`` bounds each request; ``start_timeout_s`` an MCP server's start (default:
    ``timeout_s``, so that ``--records-timeout 3`` gives up on a server that hangs at start
    after 3 s)."""
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidParameterError(f"no record source given; use one of: {FORMS}")
    spec = spec.strip()
    low = spec.lower()
    if low.startswith(("http://", "https://")):
        return _http(spec, timeout_s, headers)
    if headers:
        raise InvalidParameterError("headers apply only to an http(s):// record source")
    if low.startswith("mcp:"):
        return _mcp(spec[4:], timeout_s, timeout_s if start_timeout_s is None else start_timeout_s)
    if low.startswith("python:"):
        from ragmeter.records.callable_source import CallableSource

        return CallableSource.from_path(spec[len("python:"):])
    if low.startswith("table:") or low.endswith(_TABLE_SUFFIXES):
        from ragmeter.records.table_source import TableSource

        return TableSource(Path(spec[len("table:"):] if low.startswith("table:") else spec))
    raise InvalidParameterError(f"cannot tell what kind of record source {spec!r} is; use one of: {FORMS}")


def _http(spec: str, timeout_s: float, headers: Mapping[str, str] | None) -> RecordSource:
    from ragmeter.records.http_source import HttpSource

    template, _, fragment = spec.partition("#")
    pointers: Mapping[str, str] | str | None = None
    if fragment.startswith("/"):
        pointers = fragment
    elif fragment:
        table: dict[str, str] = {}
        for item in fragment.split(","):
            name, eq, pointer = item.partition("=")
            if not eq or not name.strip() or not pointer.startswith("/"):
                raise InvalidParameterError(f"{item!r} in {spec!r}: write attribute=/json/pointer pairs separated by "
                                            f"commas, e.g. #status=/status,product=/items/0/sku")
            table[name.strip()] = pointer
        pointers = table
    return HttpSource(template, pointers=pointers, timeout_s=timeout_s, headers=headers)


def _mcp(rest: str, timeout_s: float, start_timeout_s: float) -> RecordSource:
    from ragmeter.records.mcp_source import McpSource

    command, sep, tail = rest.partition("#")
    if not sep or not command.strip() or not tail.strip():
        raise InvalidParameterError(f"mcp:{rest}: write mcp:<server command>#<tool>, "
                                    "e.g. mcp:python server.py#get_order")
    safe = tail.endswith("#safe")
    tool_part, _, pointer = tail[:-len("#safe")].partition("#") if safe else tail.partition("#")
    match = _TOOL.match(tool_part)
    if match is None:
        raise InvalidParameterError(f"mcp:{rest}: {tool_part!r} is not a tool name (optionally with "
                                    f"(arg={{entity}},...))")
    tool, arg_text = match.group(1), match.group(2)
    arguments: dict[str, str] | None = None
    if arg_text is not None:
        arguments = {}
        for item in filter(None, (a.strip() for a in arg_text.split(","))):
            name, eq, value = item.partition("=")
            if not eq or not name.strip():
                raise InvalidParameterError(f"mcp:{rest}: {item!r}: write the tool's arguments as name=value, e.g. "
                                            f"order_id={{entity}}")
            arguments[name.strip()] = value.strip()
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InvalidParameterError(f"mcp:{rest}: the server command does not parse ({exc})") from None
    return McpSource(argv, tool=tool, arguments=arguments, pointer=pointer or "/{attribute}", timeout_s=timeout_s,
                     start_timeout_s=start_timeout_s, safe=safe)
