"""The ToolHub and what it is made of: a loop thread, one connection per server."""

from . import iri_syntax

iri_syntax.defer_iri_syntax()  # before anything here imports jsonschema

from .connection import ServerConnection, ServerState  # noqa: E402  (after defer_iri_syntax)
from .hub import (  # noqa: E402
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_START_WAIT,
    ServerStatus,
    ToolHub,
)

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_START_WAIT",
    "ServerConnection",
    "ServerState",
    "ServerStatus",
    "ToolHub",
]
