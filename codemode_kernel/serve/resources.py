"""The workspace's artifacts as MCP resources, so a client reads a large result a program kept."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

from ..artifacts import ArtifactStore

__all__ = ["add_artifact_resources"]


def add_artifact_resources(server: MCPServer[Any], artifacts: ArtifactStore) -> None:
    """Offer ``artifacts`` through resources/list, resources/read and a template. None yet."""
