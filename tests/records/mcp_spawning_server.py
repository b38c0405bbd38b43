"""A stdio MCP server that spawns a long-lived grandchild (its pid written to argv[1]) and then
serves ``get_order`` like a good server (declared read-only): the record source must stop the grandchild too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
Path(sys.argv[1]).write_text(str(child.pid))
app = MCPServer("spawning")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def get_order(order_id: str) -> dict:
    """Read one order (read-only)."""
    return {"status": "shipped"}


if __name__ == "__main__":
    app.run("stdio")
