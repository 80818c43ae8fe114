"""A small MCP server (Python SDK) served over Streamable HTTP or SSE, for the reconnect tests.

    python remote_server.py --transport http --port 8123   # http://127.0.0.1:8123/mcp
    python remote_server.py --transport sse --port 8123    # http://127.0.0.1:8123/sse

Tools: ``echo`` (read-only: returns its text) and ``pid`` (this process's pid, to tell a restarted
server from the first one).
"""

from __future__ import annotations

import argparse
import os

from mcp.server import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("remote")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool()
def pid() -> int:
    """This server process's pid."""
    return os.getpid()


def main() -> None:
    parser = argparse.ArgumentParser(description="An MCP server over HTTP or SSE for reconnect tests.")
    parser.add_argument("--transport", choices=["http", "sse"], required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    if args.transport == "http":
        server.run("streamable-http", host="127.0.0.1", port=args.port, streamable_http_path="/mcp")
    else:
        server.run("sse", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
