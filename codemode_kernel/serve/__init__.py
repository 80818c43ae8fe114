"""``codemode serve``: code mode as one MCP server in front of the configured servers.

MCP hosts (Claude Desktop, Claude Code, VS Code) get one tool, ``execute_python``, whose programs call
every configured server's tools as typed functions and come back as one result record (docs/serve.md).
"""

from .app import build_server, serve
from .record import ExecutionRecord

__all__ = ["ExecutionRecord", "build_server", "serve"]
