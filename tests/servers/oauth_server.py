"""An MCP server that signs its clients in with OAuth (the Python SDK's server auth support), for the tests.

    python oauth_server.py --port 8123                   # MCP at http://127.0.0.1:8123/mcp (Streamable HTTP)
    python oauth_server.py --port 8123 --transport sse   # MCP at http://127.0.0.1:8123/sse

It is its own authorization server: metadata discovery, dynamic client registration, PKCE, refresh tokens
that rotate, the resource indicator checked. ``/authorize`` consents at once (the test's "person" is a
script following the redirects). It refuses an expired access token and accepts a refreshed one.

Test controls (plain HTTP, no token): ``POST /test/expire`` makes every access token issued so far expired
(what the server's clock would do); ``POST /test/revoke`` also drops every refresh token; ``GET
/test/stats`` counts registrations, authorizations, code exchanges and refreshes.

Tools: ``echo(text)``, ``whoami()`` (the client id and scopes of the token the call came with) and
``admin()``, whose call needs the scope ``admin`` besides ``tools``: without it the server answers 403
``insufficient_scope`` naming both (a step-up), as servers do for their sensitive tools.
"""

from __future__ import annotations

import argparse
import json
import secrets
import time
from typing import Any

import uvicorn
from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

SCOPE = "tools"
ADMIN = "admin"


class StepUp:
    """ASGI middleware: a tools/call of ``admin`` without the ``admin`` scope is answered 403 (step-up)."""

    def __init__(self, app: Any, provider: TestProvider, metadata_url: str) -> None:
        self.app, self.provider, self.metadata_url = app, provider, metadata_url

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != "/mcp":
            return await self.app(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            request = json.loads(body)
        except ValueError:
            request = {}
        calls_admin = isinstance(request, dict) and request.get("method") == "tools/call"
        calls_admin = calls_admin and (request.get("params") or {}).get("name") == ADMIN
        if calls_admin and not self._granted(scope):
            challenge = (
                f'Bearer error="insufficient_scope", scope="{SCOPE} {ADMIN}", '
                f'resource_metadata="{self.metadata_url}"'
            )
            headers = [(b"www-authenticate", challenge.encode()), (b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 403, "headers": headers})
            await send({"type": "http.response.body", "body": b'{"error": "insufficient_scope"}'})
            return None
        replay = [{"type": "http.request", "body": body, "more_body": False}]

        async def again() -> Any:
            return replay.pop() if replay else await receive()

        return await self.app(scope, again, send)

    def _granted(self, scope: Any) -> bool:
        header = dict(scope["headers"]).get(b"authorization", b"").decode()
        token = self.provider.access.get(header.removeprefix("Bearer "))
        return token is not None and ADMIN in token.scopes


class TestProvider:
    """Everything in memory; tokens are random strings."""

    def __init__(self, token_ttl: int) -> None:
        self.token_ttl = token_ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.stats = {"registrations": 0, "authorizations": 0, "code_exchanges": 0, "refreshes": 0}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.stats["registrations"] += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.stats["authorizations"] += 1
        code = secrets.token_urlsafe(32)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        found = self.codes.get(authorization_code)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.stats["code_exchanges"] += 1
        self.codes.pop(authorization_code.code, None)
        return self._issue(client, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        if refresh_token.token not in self.refresh:
            raise TokenError("invalid_grant", "refresh token revoked")
        self.stats["refreshes"] += 1
        del self.refresh[refresh_token.token]  # rotated: the old one is spent
        return self._issue(client, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(
        self, client: OAuthClientInformationFull, scopes: list[str], resource: str | None
    ) -> OAuthToken:
        assert client.client_id is not None
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        expires = int(time.time()) + self.token_ttl
        self.access[access] = AccessToken(
            token=access, client_id=client.client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client.client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_ttl,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


def build(port: int, token_ttl: int, endpoint: str = "/mcp") -> tuple[MCPServer, TestProvider]:
    """The server: MCP at ``endpoint``, the authorization server at the same origin."""
    provider = TestProvider(token_ttl)
    base = f"http://127.0.0.1:{port}"
    server = MCPServer(
        "oauth-test",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]
            resource_server_url=f"{base}{endpoint}",  # type: ignore[arg-type]
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE, ADMIN], default_scopes=[SCOPE]
            ),
            required_scopes=[SCOPE],
            validate_token_resource=True,
        ),
    )

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    def whoami() -> dict[str, Any]:
        """The client id and scopes of the token this call came with."""
        token = get_access_token()
        return {"client_id": token.client_id if token else None, "scopes": token.scopes if token else []}

    @server.tool()
    def admin() -> str:
        """A sensitive tool: its call needs the admin scope (the middleware asks for it)."""
        return "admin done"

    @server.custom_route("/test/expire", methods=["POST"])
    async def expire(request: Request) -> Response:
        for token in provider.access.values():
            token.expires_at = int(time.time()) - 10
        return JSONResponse({"expired": len(provider.access)})

    @server.custom_route("/test/revoke", methods=["POST"])
    async def revoke(request: Request) -> Response:
        provider.access.clear()
        provider.refresh.clear()
        return JSONResponse({"revoked": True})

    @server.custom_route("/test/stats", methods=["GET"])
    async def stats(request: Request) -> Response:
        return JSONResponse(provider.stats)

    return server, provider


def main() -> None:
    parser = argparse.ArgumentParser(description="An MCP server with OAuth sign-in, for tests.")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-ttl", type=int, default=3600, help="access token lifetime, seconds")
    parser.add_argument("--transport", choices=["http", "sse"], default="http")
    args = parser.parse_args()
    if args.transport == "sse":
        build(args.port, args.token_ttl, "/sse")[0].run("sse", host="127.0.0.1", port=args.port)
        return
    server, provider = build(args.port, args.token_ttl)
    metadata = f"http://127.0.0.1:{args.port}/.well-known/oauth-protected-resource/mcp"
    app = StepUp(server.streamable_http_app(streamable_http_path="/mcp"), provider, metadata)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
