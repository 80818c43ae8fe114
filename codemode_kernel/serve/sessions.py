"""Which executor session a client's ``session`` argument names, so globals never cross clients.

A session's globals live in one worker of the Executor (``Executor.run(session=...)``). Clients name
sessions, but two clients may pick the same name, so the executor's name is the client's scope plus its
name. The scope is an identity the server issued and checks, never what a client merely says
(``client_scope``): the one stdio client, or the MCP session whose ``Mcp-Session-Id`` the SDK issued at
the handshake and matches against its live sessions (an unknown or ended one is answered 404 before any
tool runs). The 2026-07-28 protocol has no MCP sessions: a request carrying ``Mcp-Session-Id`` there is
refused, since nothing checked it, and a new session gets a name with a random part, issued by this table
and returned to the client: a key that only the client that received it holds. The same scope decides
whose "allow for this session" approvals a call may use (``approval.Allowances``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..core.errors import SessionLimitError

__all__ = ["UNCHECKED_SESSION_ID", "SessionRef", "SessionTable", "client_scope", "handshake_scope"]

UNCHECKED_SESSION_ID = (
    "Mcp-Session-Id: this request speaks MCP 2026-07-28, which has no MCP sessions, so codemode serve "
    "issued no such id and will not let one pick sessions or session approvals (another client's id would "
    "reach that client's globals and allowances). Fix: leave out the Mcp-Session-Id header; to keep globals "
    "between calls, pass `session` and then the name the result returns (the record's `session`); to allow "
    "a tool for a session, connect with the handshake protocol (initialize, MCP 2025-11-25 or earlier), "
    "whose Mcp-Session-Id the server issues and checks"
)


def client_scope(ctx: Context[Any, Any], *, stdio: bool) -> str | None:
    """Whose sessions and session approvals ``ctx``'s request reaches; None: none (a request on its own).

    Headers are the client's say-so: ``Mcp-Session-Id`` counts only in the handshake era, where the SDK's
    session manager routed the request by it to a session it issued and still has.

    Raises:
        ToolError: a 2026-07-28 request carries ``Mcp-Session-Id`` (nothing checked it), with the fix.
    """
    session_id = (ctx.headers or {}).get(MCP_SESSION_ID_HEADER)
    if not stdio and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        if session_id is not None:
            raise ToolError(UNCHECKED_SESSION_ID)
        return None
    return handshake_scope(session_id, stdio=stdio)


def handshake_scope(session_id: str | None, *, stdio: bool) -> str | None:
    """The scope of a handshake-era request whose MCP session is ``session_id`` (the SDK checked it)."""
    if stdio:
        return "stdio"  # one process serves one client
    return f"http:{session_id}" if session_id else None


@dataclass(frozen=True)
class SessionRef:
    """One run's session: the executor's name for it, the client's, and whether it starts empty."""

    key: str
    name: str
    new: bool


class SessionTable:
    """Maps (client scope, session name) to the executor's session name, within a limit on live sessions."""

    def __init__(self, max_sessions: int, alive: Callable[[], list[str]]) -> None:
        """``alive`` lists the executor's live sessions (``Executor.sessions``), so expired ones free room."""
        self.max_sessions = max_sessions
        self._alive = alive
        self._issued: set[str] = set()
        """The names this table made for clients without a scope: only these name a session of none."""

    def resolve(self, scope: str | None, name: str) -> SessionRef:
        """The session ``name`` means for a client in ``scope`` (None: a transport without sessions).

        Raises:
            SessionLimitError: the session is new and ``max_sessions`` are alive.
        """
        alive = set(self._alive())
        if scope is not None:
            key = f"{scope}\x00{name}"
            new = key not in alive
            if new:
                self._check_room(alive)
            return SessionRef(key, name, new)
        if name in self._issued and name in alive:
            return SessionRef(name, name, False)
        self._check_room(alive)
        if len(self._issued) >= 4 * self.max_sessions:
            self._issued &= alive  # ended sessions' names: never issued again, so never needed again
        minted = f"{name}~{secrets.token_urlsafe(12)}"
        self._issued.add(minted)
        return SessionRef(minted, minted, True)

    def _check_room(self, alive: set[str]) -> None:
        if len(alive) >= self.max_sessions:
            raise SessionLimitError(
                f"{len(alive)} sessions are alive, the limit (defaults.serve.maxSessions is "
                f"{self.max_sessions}); run without session, wait for an idle one to expire "
                "(defaults.serve.sessionIdle), or raise the limit in the config"
            )
