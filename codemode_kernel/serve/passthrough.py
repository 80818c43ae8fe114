"""The tools excluded from code mode (``excludedTools``), offered as ordinary MCP tools."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

from ..config import CodeModeSettings
from ..toolbox import Toolbox

__all__ = ["add_passthrough_tools"]


def add_passthrough_tools(server: MCPServer[Any], toolbox: Toolbox, settings: CodeModeSettings) -> list[str]:
    """Add each excluded tool to ``server``; returns their names. None yet."""
    return []
