"""An MCP server whose tools are named like what code mode defines itself: parallel, atools and llm.

In programs, ``parallel`` and ``llm`` are code mode's helpers and ``atools`` its async namespace: these
tools must get a name of their own (``parallel_``...), never shadow the helpers or be shadowed by them.
"""

from __future__ import annotations

from mcp.server import MCPServer

server = MCPServer("reserved")


@server.tool()
def parallel(x: int) -> int:
    """Twice a number (a tool that happens to be called parallel)."""
    return 2 * x


@server.tool()
def atools(name: str) -> str:
    """A greeting (a tool that happens to be called atools)."""
    return f"hello {name}"


@server.tool()
def llm(prompt: str) -> str:
    """An echo (a tool that happens to be called llm)."""
    return f"echo: {prompt}"


if __name__ == "__main__":
    server.run("stdio")
