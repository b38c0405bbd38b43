"""A stdio MCP server for record-source tests, written with the mcp SDK's server side.

    python tests/records_mcp_server.py TABLE.jsonl CALL_LOG

Tools: ``get_order(order_id)`` (read-only: the order's attributes, ``{}`` when there is none),
``slow_order(order_id)`` (the same after 30 s), ``failing_order(order_id)`` (raises), each
annotated ``readOnlyHint: true``; ``lookup_order(order_id)`` (reads as get_order does, but says
nothing about it: no annotation); ``cancel_order(order_id)`` (it changes data, writing the order
id to ``CALL_LOG.cancelled``, and says nothing about it, as a careless server would); and
``purge_order(order_id)`` (writes the same, and declares it: ``destructiveHint: true``).
Every tool call appends its tool name to CALL_LOG before it runs, so a test can prove which
tools were ever called.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from records_servers import documents

TABLE, LOG = Path(sys.argv[1]), Path(sys.argv[2])
DOCS = documents(TABLE)
app = MCPServer("test-records")
READS = ToolAnnotations(readOnlyHint=True)


def _log(name: str) -> None:
    with LOG.open("a") as f:
        f.write(name + "\n")


@app.tool(annotations=READS)
def get_order(order_id: str) -> dict[str, Any]:
    """Read one order's attributes (read-only)."""
    _log("get_order")
    return DOCS.get(order_id, {})


@app.tool(annotations=READS)
def slow_order(order_id: str) -> dict[str, Any]:
    """Read one order, slowly."""
    _log("slow_order")
    time.sleep(30)
    return DOCS.get(order_id, {})


@app.tool(annotations=READS)
def failing_order(order_id: str) -> dict[str, Any]:
    """Always fails."""
    _log("failing_order")
    raise RuntimeError("the order database is down")


@app.tool()
def cancel_order(order_id: str) -> str:
    """Cancel an order (changes data)."""
    _log("cancel_order")
    Path(str(LOG) + ".cancelled").write_text(order_id)
    return "cancelled"


@app.tool()
def lookup_order(order_id: str) -> dict[str, Any]:
    """Read one order's attributes (read-only, though the tool does not say so)."""
    _log("lookup_order")
    return DOCS.get(order_id, {})


@app.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def purge_order(order_id: str) -> str:
    """Delete an order (changes data, and says so)."""
    _log("purge_order")
    Path(str(LOG) + ".cancelled").write_text(order_id)
    return "purged"


if __name__ == "__main__":
    app.run("stdio")
