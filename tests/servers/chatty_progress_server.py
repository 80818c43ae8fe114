"""An MCP server written with the Python SDK whose one tool reports progress as fast as it can.

``count(to, seconds)`` sends ``to`` progress notifications (``step N of M``) spread over ``seconds``, then
returns ``to``: a chatty server, for checking that views coalesce what they show of it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer("chatty")


@server.tool()
async def count(to: int, seconds: float, ctx: Context[Any, Any]) -> int:
    """Count to a number over some seconds, reporting progress at every step."""
    for step in range(1, to + 1):
        await ctx.report_progress(step, to, f"step {step} of {to}")
        await asyncio.sleep(seconds / to)
    return to


if __name__ == "__main__":
    server.run("stdio")
