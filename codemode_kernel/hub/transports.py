"""How the hub reaches one server: the transport its config asks for, and one line on why it failed."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp import MCPError, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types.jsonrpc import CONNECTION_CLOSED

from ..config import ServerConfig
from ..core.errors import ServerError, SignInRequired
from .auth import SignIn, server_oauth
from .stdio import DEFAULT_MAX_RESULT_BYTES, StdoutNoise, stdio_transport

__all__ = ["describe_failure", "needs_sign_in", "open_transport", "stderr_log_name", "uses_oauth"]


def open_transport(
    config: ServerConfig, *, log_path: Path | None, noise: StdoutNoise, sign_in: SignIn | None = None
) -> Any:
    """The transport (an async context manager of streams) for ``mcp.Client``, as the config says.

    Args:
        config: the server's entry (its transport, command or URL, headers, oauth).
        log_path: where a stdio server's stderr goes (required for stdio).
        noise: counts the non-JSON-RPC lines a stdio server writes to stdout, across restarts.
        sign_in: the person's side of an OAuth sign-in (``codemode login``); None: a server that wants
            one fails with ``SignInRequired`` (auth.py).
    """
    if config.transport == "stdio":
        assert config.command is not None and log_path is not None
        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env) or None, cwd=config.cwd
        )
        # Ours, not the SDK's stdio_client: linear reading, a size cap, a capped stderr log (stdio.py).
        return stdio_transport(
            params,
            server=config.name,
            log_path=log_path,
            max_line_bytes=config.max_result_bytes or DEFAULT_MAX_RESULT_BYTES,
            noise=noise,
        )
    assert config.url is not None
    headers = dict(config.headers)
    auth = server_oauth(config, sign_in=sign_in) if uses_oauth(config) else None
    if config.transport == "sse":
        return sse_client(config.url, headers=headers or None, auth=auth)
    return _streamable_http(config.url, headers, auth)


def uses_oauth(config: ServerConfig) -> bool:
    """Whether a remote server signs in with OAuth: unless its headers carry a credential of their own.

    An ``Authorization`` header in the config is the user's own token; a server that refuses it should
    say so, not ask for a sign-in the user did not configure (an ``oauth`` block asks for one anyway).
    """
    if config.transport == "stdio":
        return False
    own = any(key.lower() == "authorization" for key in config.headers)
    return config.oauth is not None or not own


@contextlib.asynccontextmanager
async def _streamable_http(url: str, headers: dict[str, str], auth: Any) -> AsyncIterator[Any]:
    """Streamable HTTP with our headers and OAuth; the HTTP client we create is ours to close."""
    async with (
        create_mcp_http_client(headers=headers or None, auth=auth) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def describe_failure(exc: BaseException) -> str:
    """One line that says why a connection failed, digging through exception groups."""
    signin = _find_sign_in(exc)
    if signin is not None:
        return signin.reason
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, ServerError):  # a failed sign-in, already worded
        return str(exc).split(": ", 1)[-1]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return "the server closed the connection during start-up (see its stderr log)"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def needs_sign_in(exc: BaseException) -> bool:
    """Whether a connection failed because the server wants its user to sign in (``SignInRequired``)."""
    return _find_sign_in(exc) is not None


def _find_sign_in(exc: BaseException) -> SignInRequired | None:
    """A ``SignInRequired`` anywhere in ``exc`` (the transport's task groups nest it)."""
    if isinstance(exc, SignInRequired):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _find_sign_in(inner)) is not None:
                return found
    return None


def stderr_log_name(server: str) -> str:
    """The file name of a stdio server's stderr log: its name, with anything unsafe in a path replaced."""
    return (re.sub(r"[^A-Za-z0-9_.-]", "_", server) or "server") + ".stderr.log"
