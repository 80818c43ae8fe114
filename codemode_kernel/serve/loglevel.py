"""``logging/setLevel``: which of serve's log messages a handshake-era client is sent.

What a program prints goes to the client as ``notifications/message`` (``progress.py``: logger ``stdout``
at info, ``stderr`` at warning). On protocols up to 2025-11-25 a client picks the lowest level it wants with
``logging/setLevel``, for the rest of its connection (stdio: the process; HTTP: its MCP session, which the
server issued and checks, as ``sessions.client_scope`` says); until it does, every level is sent. The
2026-07-28 protocol has no ``logging/setLevel`` (the SDK answers "Method not found" there): each request
names its level in ``_meta`` and the SDK filters, so nothing is stored for it here.

The SDK's ``MCPServer`` has no setting for this method, so the handler goes to its low-level server, as
``resources.py`` does; registering it is also what declares the ``logging`` capability.
"""

from __future__ import annotations

from typing import Any, get_args

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.types import EmptyResult, LoggingLevel, SetLevelRequestParams

from .sessions import handshake_scope

__all__ = ["LEVELS", "LogLevels"]

LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)
"""The MCP (RFC 5424) levels, least severe first."""


class LogLevels:
    """The level each handshake-era client set, by scope; only the ``LIMIT`` most recent are kept."""

    LIMIT = 1000

    def __init__(self, *, stdio: bool) -> None:
        self._stdio = stdio
        self._levels: dict[str, LoggingLevel] = {}

    def install(self, server: MCPServer[Any]) -> None:
        """Answer ``logging/setLevel`` on ``server`` (and so declare the ``logging`` capability)."""
        lowlevel = server._lowlevel_server
        lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, self._set_level)

    def wants(self, scope: str | None, level: LoggingLevel) -> bool:
        """Whether the client in ``scope`` is to be sent a message at ``level``."""
        floor = self._levels.get(scope) if scope is not None else None
        return floor is None or LEVELS.index(level) >= LEVELS.index(floor)

    async def _set_level(
        self, ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams
    ) -> EmptyResult:
        headers = getattr(ctx.request, "headers", None)
        session_id = headers.get(MCP_SESSION_ID_HEADER) if headers is not None else None
        scope = handshake_scope(session_id, stdio=self._stdio)
        if scope is not None:  # a request without an MCP session: nothing later could be filtered by it
            self._levels.pop(scope, None)
            self._levels[scope] = params.level  # most recent last
            while len(self._levels) > self.LIMIT:
                del self._levels[next(iter(self._levels))]
        return EmptyResult()
