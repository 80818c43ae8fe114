"""The reconnect policy: when a call goes again, how often a down remote server is tried, what callers read.

``ServerConnection`` does the reconnecting (one attempt at a time, as a task calls wait for, each call at
most its own timeout); this module holds the rules and the words, so both can be read in one place.
"""

from __future__ import annotations

from mcp import MCPError
from mcp_types.jsonrpc import INVALID_REQUEST

from ..config import ServerConfig
from ..core.toolspec import ToolSpec

__all__ = [
    "RECONNECT_BACKOFF",
    "down_message",
    "lost_again_message",
    "maybe_ran_message",
    "not_ready_message",
    "safe_to_repeat",
    "session_lost",
]

RECONNECT_BACKOFF = 2.0
"""Seconds after a failed attempt to reach a remote server during which calls fail at once with its error
(an attempt at a host that does not answer costs up to its connect timeout: not one per call)."""


def safe_to_repeat(spec: ToolSpec | None) -> bool:
    """Whether a call lost with its connection may be sent again: the tool says it is harmless."""
    hints = (spec.annotations or {}) if spec else {}
    return bool(hints.get("readOnlyHint") or hints.get("idempotentHint"))


def session_lost(config: ServerConfig, exc: MCPError) -> bool:
    """Whether a Streamable HTTP server refused the request because it no longer knows our session.

    A server that restarted answers HTTP 404 to the old session id; the SDK reports it as
    INVALID_REQUEST, with the server's message ("Session not found") or its own ("Session
    terminated"). The request did not run, and the spec says to start a new session.
    """
    return (
        config.transport == "http"
        and exc.code == INVALID_REQUEST
        and "session" in (exc.message or "").lower()
    )


def maybe_ran_message(config: ServerConfig, tool: str) -> str:
    """The connection was lost during a call that is not safe to repeat: it was made again, not resent."""
    return (
        f"{_lost(config)} during the call to {tool!r}, which may or may not have run; {_back(config)}: "
        "call again if repeating the call is safe"
    )


def lost_again_message(config: ServerConfig, tool: str) -> str:
    """A repeated call lost the connection again: it is not repeated a third time."""
    if config.transport == "stdio":
        advice = "Its stderr log may say why it exits; the next call starts it again."
    else:
        advice = "Check the server; the next call connects again."
    return (
        f"{_lost(config)} again when the call to {tool!r} was repeated (the first attempt had ended the "
        f"same way and {_back(config)}); it is not repeated a third time. {advice}"
    )


def down_message(config: ServerConfig, reason: str, retry_in: float) -> str:
    """Why the connection could not be made again, and (remote) when the next attempt can be."""
    if config.transport == "stdio":
        return f"the server exited and did not come back: {reason}"
    return (
        f"cannot be reached at {config.url} ({reason}); calls fail at once until it is tried again in "
        f"{retry_in:.1f} s"
    )


def not_ready_message(config: ServerConfig, waited: float, connect_timeout: float) -> str:
    """A call's timeout ran out while the server was (re)connecting, which goes on in the background."""
    where = f" to {config.url}" if config.transport != "stdio" else ""
    return (
        f"still connecting{where}: not ready within {waited:g} s, this call's timeout; it goes on connecting "
        f"in the background (for up to {connect_timeout:g} s, its connectTimeout) and later calls use it "
        "once it is ready"
    )


def _lost(config: ServerConfig) -> str:
    if config.transport == "stdio":
        return "the server exited"
    return f"the connection to {config.url} was lost"


def _back(config: ServerConfig) -> str:
    return "it was restarted" if config.transport == "stdio" else "it was reconnected"
