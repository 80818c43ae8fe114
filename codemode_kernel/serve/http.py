"""Serve over Streamable HTTP at ``/mcp``, guarded: whoever reaches the port runs programs with your tools.

Three checks run in front of the SDK's app, in this order, before any MCP session is made:

- **Host**: the request must name this server (its bind address, the loopback names on loopback, this
  machine's name or any IP address on a wildcard bind, or an ``--allow-host`` name). A DNS rebinding page
  reaches 127.0.0.1 under its own name, so its Host gives it away: 421.
- **Origin**: a browser request must come from the server's own origin or an ``--allow-origin`` one; a
  request without Origin (every non-browser client) passes. The MCP spec asks for 403 on an invalid Origin.
- **Bearer token**: required on any address but loopback, and on loopback when one is configured;
  compared in constant time; 401 with ``WWW-Authenticate: Bearer``.

The SDK has a Host/Origin check of its own (``TransportSecuritySettings``), which we turn off instead of
duplicating: it cannot say "any address of this machine" for 0.0.0.0, answers a bare "Invalid Host header",
and runs after a session is admitted. Its bearer auth needs an OAuth issuer we do not have.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import secrets
import socket
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["LOOPBACK_HOSTS", "TOKEN_ENV", "HttpAccess", "http_access", "is_loopback", "run_http"]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""Bind addresses reachable only from this machine: the only ones served without a bearer token."""
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
"""Bind addresses meaning every interface of this machine."""
TOKEN_ENV = "CODEMODE_SERVE_TOKEN"
"""The environment variable a bearer token is read from unless ``--token-env`` names another."""
ECHO_LIMIT = 200
"""Characters of a refused header a refusal quotes back."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HttpAccess:
    """Who may use the HTTP server: the bearer token (None: none asked) and the extra Host/Origin values."""

    token: str | None = None
    token_env: str = TOKEN_ENV
    """Where the token came from, or would have: named in messages, never the token itself."""
    generated: bool = False
    """The token was made for this run (no variable set), so it is printed once at start."""
    allow_hosts: tuple[str, ...] = ()
    allow_origins: tuple[str, ...] = ()


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves this machine only."""
    return host.strip("[]").lower() in LOOPBACK_HOSTS


def http_access(
    host: str,
    *,
    token_env: str | None = None,
    allow_hosts: Iterable[str] = (),
    allow_origins: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> HttpAccess:
    """The access rules for serving on ``host``: what ``codemode serve``'s HTTP options ask for.

    A token is required beyond loopback, when ``token_env`` is given, or when ``$CODEMODE_SERVE_TOKEN``
    is set; it is the variable's value, or, with the variable unset or empty, a new random one.

    Raises:
        ValueError: an ``allow_hosts`` or ``allow_origins`` value is not a host name or an origin.
    """
    environ = os.environ if environ is None else environ
    name = token_env or TOKEN_ENV
    value = environ.get(name, "").strip()
    token: str | None = value or None
    generated = False
    if token is None and (token_env is not None or not is_loopback(host)):
        token, generated = secrets.token_urlsafe(32), True
    return HttpAccess(
        token=token,
        token_env=name,
        generated=generated,
        allow_hosts=tuple(_allowed_host(value) for value in allow_hosts),
        allow_origins=tuple(_allowed_origin(value) for value in allow_origins),
    )


def run_http(server: MCPServer[Any], *, host: str, port: int, access: HttpAccess | None = None) -> None:
    """Serve ``server`` at ``http://host:port/mcp`` behind the Host, Origin and token checks; blocks.

    Raises:
        ValueError: ``host`` is not loopback and ``access`` has no token.
    """
    access = access if access is not None else HttpAccess()
    if access.token is None and not is_loopback(host):
        raise ValueError(f"--host {host}: serving beyond this machine requires a bearer token")
    off = TransportSecuritySettings(enable_dns_rebinding_protection=False)  # _Guard checks, in front
    sdk_app = server.streamable_http_app(transport_security=off, host=host)
    app = _Guard(sdk_app, _Policy(host, port, access), access)
    print(_announcement(host, port, access), file=sys.stderr, flush=True)
    config = uvicorn.Config(app, host=host, port=port, log_level=server.settings.log_level.lower())
    anyio.run(uvicorn.Server(config).serve)


def _announcement(host: str, port: int, access: HttpAccess) -> str:
    """What the person starting the server reads: where it listens, and how a client gets in."""
    if host.strip("[]") in WILDCARD_HOSTS:
        where = f"http://{socket.gethostname()}:{port}/mcp (bound to {host or '0.0.0.0'}, every interface)"
    else:
        where = f"http://{_bracketed(host)}:{port}/mcp"
    if access.token is None:
        return f"codemode serve: Streamable HTTP at {where}; no token (loopback only). Ctrl-C stops it."
    if not access.generated:
        return (
            f"codemode serve: Streamable HTTP at {where}; clients send the bearer token in "
            f"${access.token_env} as the header 'Authorization: Bearer <token>'. Ctrl-C stops it."
        )
    return (
        f"codemode serve: Streamable HTTP at {where}; clients must send this header (a token made for this "
        f"run, shown once; set ${access.token_env} to choose one):\n"
        f"    Authorization: Bearer {access.token}"
    )


# -- the checks ------------------------------------------------------------------------------------


class _Policy:
    """Which Host and Origin headers name this server."""

    def __init__(self, host: str, port: int, access: HttpAccess) -> None:
        bound = host.strip("[]").lower()
        self.port = port
        self.any_address = bound in WILDCARD_HOSTS
        if is_loopback(bound):
            self.names = set(LOOPBACK_HOSTS)
        elif self.any_address:
            self.names = set(LOOPBACK_HOSTS) | {socket.gethostname().lower()}
        else:
            self.names = {bound}
        self.extra = [_split_authority(value) for value in access.allow_hosts]
        self.origins = frozenset(access.allow_origins)

    def host_ok(self, header: str) -> bool:
        """Whether the Host ``header`` names this server."""
        parsed = _split_authority(header)
        if parsed is None:
            return False
        name, port = parsed
        ours = name in self.names or (self.any_address and _is_ip(name))
        if ours and (port if port is not None else 80) == self.port:
            return True
        return any(name == extra[0] and extra[1] in (None, port) for extra in self.extra if extra is not None)

    def origin_ok(self, origin: str | None, host_header: str) -> bool:
        """Whether a request from ``origin`` (None: not a browser) naming ``host_header`` may go on.

        The server's own origin is the one whose host and port are the Host header's, which has passed
        ``host_ok`` already: a page served under this server's name.
        """
        if origin is None:
            return True
        normal = origin.strip().lower().rstrip("/")
        if normal in self.origins:
            return True
        scheme, sep, authority = normal.partition("://")
        return bool(sep) and scheme in ("http", "https") and authority == host_header.strip().lower()


class _Guard:
    """ASGI middleware answering every HTTP request the policy or the token refuses; passes the rest on."""

    def __init__(self, app: ASGIApp, policy: _Policy, access: HttpAccess) -> None:
        self.app = app
        self.policy = policy
        self.access = access
        self.token = access.token.encode() if access.token is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self._refusal(Headers(scope=scope)) if scope["type"] == "http" else None
        if refusal is None:
            await self.app(scope, receive, send)
        else:
            await refusal(scope, receive, send)

    def _refusal(self, headers: Headers) -> Response | None:
        host = headers.get("host", "")
        if not self.policy.host_ok(host):
            return _refuse(
                421,
                "invalid_host",
                f"Host {_quote(host)} is not a name this server answers to (refused against DNS rebinding); "
                "behind a reverse proxy or under another name, start codemode serve with --allow-host NAME",
            )
        origin = headers.get("origin")
        if not self.policy.origin_ok(origin, host):
            return _refuse(
                403,
                "invalid_origin",
                f"Origin {_quote(origin or '')} is neither this server's own nor allowed: web pages "
                "elsewhere may not call it; to let a browser client on that origin in, start codemode "
                "serve with --allow-origin ORIGIN",
            )
        if self.token is None:
            return None
        scheme, _, credentials = headers.get("authorization", "").strip().partition(" ")
        where = (
            "the token codemode serve printed when it started"
            if self.access.generated
            else f"the value of ${self.access.token_env} where codemode serve runs"
        )
        if scheme.lower() != "bearer" or not credentials.strip():
            return _refuse(
                401,
                "token_required",
                f"codemode serve requires a bearer token: send the header 'Authorization: Bearer <token>' "
                f"with {where}",
                challenge='Bearer realm="codemode"',
            )
        if not hmac.compare_digest(credentials.strip().encode(), self.token):
            return _refuse(
                401,
                "invalid_token",
                f"the bearer token is not this server's: send {where}",
                challenge='Bearer realm="codemode", error="invalid_token"',
            )
        return None


def _refuse(status: int, error: str, description: str, *, challenge: str | None = None) -> Response:
    """A JSON refusal shaped like the SDK's own auth errors, with a challenge for 401; logged on stderr."""
    log.warning("codemode serve refused a request (%d %s): %s", status, error, description)
    body = json.dumps({"error": error, "error_description": description})
    headers = {"WWW-Authenticate": challenge} if challenge is not None else None
    return Response(body, status_code=status, media_type="application/json", headers=headers)


# -- host names and origins ------------------------------------------------------------------------


def _split_authority(value: str) -> tuple[str, int | None] | None:
    """``name``, ``name:port``, ``[v6]:port`` or a bare IPv6 address as (lower-case name, port), else None."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
    elif value.count(":") > 1:
        name, rest = value, ""
    else:
        name, sep, port_text = value.partition(":")
        rest = sep + port_text
    if rest and not (rest.startswith(":") and rest[1:].isdigit() and int(rest[1:]) < 65536):
        return None
    name = name.rstrip(".")
    if not name or any(char in name for char in "/@?#\\ %"):
        return None
    return name, int(rest[1:]) if rest else None


def _allowed_host(value: str) -> str:
    """An ``--allow-host`` value, checked and lower-cased.

    Raises:
        ValueError: it is not a host name with an optional port.
    """
    if _split_authority(value) is None:
        raise ValueError(
            f"--allow-host {value!r}: give a host name with an optional port (proxy.example.com, "
            "proxy.example.com:8443, [::1]:8000), not a URL"
        )
    return value.strip().lower()


def _allowed_origin(value: str) -> str:
    """An ``--allow-origin`` value as browsers send it: ``scheme://host[:port]``, lower-case, no slash.

    Raises:
        ValueError: it is not an http or https origin.
    """
    normal = value.strip().lower().rstrip("/")
    scheme, sep, authority = normal.partition("://")
    if not sep or scheme not in ("http", "https") or _split_authority(authority) is None:
        raise ValueError(
            f"--allow-origin {value!r}: give an origin as a browser sends it, scheme://host[:port] "
            "(https://app.example.com, http://localhost:5173), without a path"
        )
    return normal


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _quote(value: str) -> str:
    cut = value[:ECHO_LIMIT] + ("…" if len(value) > ECHO_LIMIT else "")
    return repr(cut)
