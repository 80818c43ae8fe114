"""``codemode login`` and ``codemode logout``: sign in to a remote server in the terminal, or forget it.

A login is a real connection: the server's 401 starts the SDK's flow (discovery, registration, the link,
the loopback redirect, the token exchange), and it ends when the server's tools are listed with the new
token. That is also what it measures: from the link opened to the tools ready.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from mcp import Client

from ..config import Config, ServerConfig
from ..core.errors import ConfigError, ServerError
from .auth_signin import LoopbackSignIn
from .auth_store import TokenStore
from .listing import list_tools
from .stdio import StdoutNoise
from .transports import describe_failure, open_transport, uses_oauth

__all__ = ["LoginResult", "login", "logout", "remote_server"]


@dataclass(frozen=True)
class LoginResult:
    """What a login did.

    Attributes:
        server: the server's name.
        tools: how many tools it listed once signed in.
        signed_in: False when the server never asked (it needs no sign-in, or a stored one still works).
        seconds: from the link opened to the tools listed (None when no link was opened).
        store: the file that keeps the tokens.
    """

    server: str
    tools: int
    signed_in: bool
    seconds: float | None
    store: str


def remote_server(config: Config, name: str) -> ServerConfig:
    """The configured remote server ``name``, or a ConfigError naming what there is."""
    source = str(config.source) if config.source else None
    server = config.servers.get(name)
    if server is None:
        remote = [n for n, s in config.servers.items() if s.transport != "stdio"]
        known = ", ".join(remote) if remote else "none"
        raise ConfigError(
            f"no server named {name!r}",
            file=source,
            fix=f"name one of the remote (http, sse) servers in the config: {known}",
        )
    if server.transport == "stdio":
        raise ConfigError(
            f"{name!r} is a local (stdio) server: only remote servers sign in", file=source, fix=None
        )
    if server.disabled:
        raise ConfigError(f"{name!r} is disabled", file=source, fix='remove "disabled": true first')
    if not uses_oauth(server):
        raise ConfigError(
            f"{name!r} sends its own Authorization header, so codemode does not sign in to it",
            file=source,
            fix='remove the header to sign in with OAuth instead, or add an "oauth" block to both',
        )
    return server


async def login(
    server: ServerConfig,
    *,
    announce: Callable[[str], None],
    timeout: float = 300.0,
    open_browser: bool = True,
    on_link: Callable[[str], None] | None = None,
) -> LoginResult:
    """Sign in to ``server`` (the link shown and opened, the redirect awaited) and list its tools.

    ``open_browser`` and ``on_link`` are the ``LoopbackSignIn``'s: a kernel shows the link instead.

    Raises:
        SignInFailed: the sign-in was refused, timed out, or its answer was not usable.
        ServerError: the server could not be reached or failed after the sign-in.
    """
    port = server.oauth.callback_port if server.oauth else None
    sign_in = LoopbackSignIn(
        server.name,
        announce=announce,
        port=port,
        timeout=timeout,
        fresh=True,
        open_browser=open_browser,
        on_link=on_link,
    )
    async with sign_in:
        transport = open_transport(server, log_path=None, noise=StdoutNoise(), sign_in=sign_in)
        try:
            async with Client(transport, mode=server.protocol) as client:
                tools, _ = await list_tools(client, server.name)
        except ServerError:
            raise
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            inner = _first_server_error(exc)
            if inner is not None:
                raise inner from None
            reason = describe_failure(exc)
            message = f"could not sign in at {server.url} ({reason}); check that it runs and the url is right"
            raise ServerError(message, server=server.name) from None
        ready = time.perf_counter()
    seconds = ready - sign_in.opened_at if sign_in.opened_at is not None else None
    assert server.url is not None
    store = str(TokenStore(server.url).path)
    return LoginResult(server.name, len(tools), sign_in.opened_at is not None, seconds, store)


def logout(server: ServerConfig) -> bool:
    """Forget the server's tokens and registration; False if none were stored."""
    assert server.url is not None
    return TokenStore(server.url).delete()


def _first_server_error(exc: BaseException) -> ServerError | None:
    """Our own error (a refused or timed-out sign-in) inside the transport's exception groups."""
    if isinstance(exc, ServerError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _first_server_error(inner)) is not None:
                return found
    return None
