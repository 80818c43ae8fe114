"""The ToolHub and what it is made of: a loop thread, one connection per server."""

from .connection import ServerConnection, ServerState
from .hub import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_START_WAIT, ServerStatus, ToolHub

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_START_WAIT",
    "ServerConnection",
    "ServerState",
    "ServerStatus",
    "ToolHub",
]
