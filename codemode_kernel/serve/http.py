"""Serve over Streamable HTTP at ``/mcp`` (the SDK's app, run by uvicorn)."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

__all__ = ["run_http"]


def run_http(server: MCPServer[Any], *, host: str, port: int) -> None:
    """Serve ``server`` on ``host:port`` until interrupted."""
    server.run("streamable-http", host=host, port=port)
