"""OAuth for remote servers: the MCP SDK's ``OAuthClientProvider``, with our token store and sign-in rules.

The SDK does the protocol (docs/hub.md, "Remote servers and sign-in"): protected-resource and
authorization-server metadata discovery with the spec's fallbacks, Client ID Metadata Documents, dynamic
client registration, PKCE, scopes from ``WWW-Authenticate`` and step-up, refresh, the resource indicator.
What this module adds:

- where the person is. Only ``codemode login`` signs in (a ``SignIn``: the link opened, a loopback
  redirect). Everywhere else (the kernel, ``run``, ``serve``, ``doctor``) the hub has nobody to show a link
  to: a server that wants a sign-in fails its connection at once with ``SignInRequired``, which names the
  command, before anything is registered, and never delays the other servers.
- what survives a restart. The SDK keeps the token's expiry and the discovered metadata in memory only;
  the store keeps both, so a token that expired while nothing ran is refreshed at the right token endpoint
  instead of asking the person again.
- a refresh on 401. A token the server refuses before its time (revoked, a shorter life than it said) is
  refreshed once where the SDK would start a new sign-in; a refresh the server refuses forgets the tokens.
- a client registered ahead (``oauth.clientId`` in the config) with the token endpoint authentication the
  authorization server says it accepts.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncGenerator
from typing import Protocol

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata
from mcp.shared.auth_utils import calculate_token_expiry

from ..config import OAuthSettings, ServerConfig
from ..core.errors import SignInFailed, SignInRequired
from .auth_store import TokenStore

__all__ = ["ServerOAuth", "SignIn", "login_hint", "server_oauth"]

log = logging.getLogger(__name__)

PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback"
"""The redirect URI a hub without a person names (it never sends anyone to it)."""


class SignIn(Protocol):
    """The person's side of an authorization: show the link, wait for the redirect (``auth_signin.py``)."""

    redirect_uri: str
    fresh: bool
    """Sign in anew even where stored tokens would do (``codemode login``)."""

    async def open(self, authorization_url: str) -> None:
        """Show the person the link (and open it where that can be done)."""

    async def wait(self) -> AuthorizationCodeResult:
        """The redirect's parameters, once the person has signed in."""

    async def aclose(self) -> None:
        """Give back what waiting for redirects holds (a listening port)."""


def login_hint(server: str) -> str:
    """The fix, as every message says it."""
    return (
        f"run `codemode login {server}`" if re.fullmatch(r"[\w.-]+", server) else "run `codemode login NAME`"
    )


class ServerOAuth(OAuthClientProvider):
    """The SDK's OAuth provider for one configured server (an ``httpx2.Auth`` for its HTTP client).

    Args:
        config: the server's entry (its URL, name and ``oauth`` settings).
        store: its token file.
        sign_in: the person's side of a sign-in; None where nobody can sign in (every start but login).
    """

    def __init__(self, config: ServerConfig, store: TokenStore, sign_in: SignIn | None = None) -> None:
        assert config.url is not None
        settings = config.oauth or OAuthSettings()
        self.server = config.name
        self.settings = settings
        self.store = store
        self.sign_in = sign_in
        self._refreshing = False
        self._refresh_used: str | None = None
        metadata = OAuthClientMetadata(
            redirect_uris=[sign_in.redirect_uri if sign_in else PLACEHOLDER_REDIRECT],  # type: ignore[list-item]
            client_name="codemode",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            scope=" ".join(settings.scopes) or None,
        )
        super().__init__(
            config.url,
            metadata,
            store,
            redirect_handler=sign_in.open if sign_in else None,
            callback_handler=sign_in.wait if sign_in else None,
            client_metadata_url=settings.client_metadata_url,
        )

    # -- the flow --------------------------------------------------------------------------------

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self.store.changed():
            self._initialized = False  # another process signed in or out since: read the file again
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if outgoing is request and self.sign_in is None and self._needs_person(response):
                    if response.status_code == 403:
                        self._remember_step_up(response)
                    raise SignInRequired(self._why_sign_in(response), server=self.server)
                outgoing = await flow.asend(response)
                if self.sign_in is not None and outgoing is not request and outgoing.method == "POST":
                    outgoing = self._widen_registration(outgoing)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _widen_registration(self, outgoing: httpx2.Request) -> httpx2.Request:
        """A dynamic registration also asks for the scopes an earlier step-up wanted.

        The SDK registers with the scope of this 401's challenge; an authorization server that holds a
        client to its registered scopes would refuse the wider sign-in that follows.
        """
        wanted = self.store.wanted_scope()
        if not wanted or not outgoing.headers.get("content-type", "").startswith("application/json"):
            return outgoing
        try:
            body = json.loads(outgoing.content)
        except ValueError:
            return outgoing
        if not isinstance(body, dict) or "redirect_uris" not in body:
            return outgoing  # not a registration
        body["scope"] = _union(body.get("scope"), wanted)
        return httpx2.Request("POST", outgoing.url, json=body, headers={"Content-Type": "application/json"})

    def _needs_person(self, response: httpx2.Response) -> bool:
        """Whether only a new sign-in can answer this response (nobody here to give it)."""
        if response.status_code == 401:
            return not self.context.can_refresh_token()
        return response.status_code == 403 and _www_auth_error(response) == "insufficient_scope"

    def _remember_step_up(self, response: httpx2.Response) -> None:
        """Keep the scopes a step-up asked for, so that the next ``codemode login`` asks for them too."""
        tokens = self.context.current_tokens
        granted = (tokens.scope if tokens else None) or self.context.client_metadata.scope
        wanted = _union(granted, [*self.store.wanted_scope(), *_safe_scope(response).split()])
        if wanted:
            self.store.want_scope(wanted)

    def _why_sign_in(self, response: httpx2.Response) -> str:
        fix = login_hint(self.server)
        if response.status_code == 403:
            scope = _safe_scope(response)
            more = f" (scope {scope})" if scope else ""
            return f"needs more permission{more}: sign in again, {fix}"
        if self.store.has_tokens():
            return f"the sign-in expired and could not be renewed: {fix}"
        return f"needs sign-in (OAuth): {fix}"

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self.store.expires_at()
        if self.context.oauth_metadata is None:
            resource, server, server_url = self.store.discovery()
            self.context.protected_resource_metadata = resource
            self.context.oauth_metadata = server
            self.context.auth_server_url = server_url
        self._fit_configured_client()

    async def _perform_authorization(self) -> httpx2.Request:
        """After discovery: refresh where a refresh will do, else the person signs in (or is told to)."""
        self._fit_configured_client()
        needed = _union(self.context.client_metadata.scope, self.settings.scopes)
        self.context.client_metadata.scope = needed
        granted = self.context.current_tokens.scope if self.context.current_tokens else None
        if self.context.can_refresh_token() and _covers(granted, needed):
            self._refreshing = True  # a refused refresh forgets the tokens: the next start signs in
            return await self._refresh_token()
        if self.sign_in is None:
            reason = f"needs sign-in (OAuth): {login_hint(self.server)}"
            raise SignInRequired(reason, server=self.server)
        # A new sign-in also asks for what an earlier step-up wanted when nobody could sign in.
        self.context.client_metadata.scope = _union(needed, self.store.wanted_scope())
        return await super()._perform_authorization()

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        if self._refreshing:
            self._refreshing = False
            if not await self._handle_refresh_response(response):
                raise SignInRequired(
                    f"the sign-in expired and could not be renewed: {login_hint(self.server)}",
                    server=self.server,
                )
            return
        await super()._handle_token_response(response)
        context = self.context
        self.store.set_discovery(
            context.protected_resource_metadata, context.oauth_metadata, context.auth_server_url
        )

    async def _refresh_token(self) -> httpx2.Request:
        tokens = self.context.current_tokens
        self._refresh_used = tokens.refresh_token if tokens else None
        return await super()._refresh_token()

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        renewed = await super()._handle_refresh_response(response)
        if renewed:
            if self.context.current_tokens is not None:
                self.context.token_expiry_time = calculate_token_expiry(
                    self.context.current_tokens.expires_in
                )
            return True
        newer = await self.store.get_tokens()
        if newer is not None and newer.refresh_token != self._refresh_used:
            # Another process (a kernel, a terminal) refreshed at the same time, and the server rotated
            # the refresh token: theirs are the live ones.
            self.context.current_tokens = newer
            self.context.token_expiry_time = self.store.expires_at()
            return True
        if response.status_code in (400, 401):
            self.store.forget_tokens()  # invalid_grant: the refresh token is dead, never try it again
        return False

    def _fit_configured_client(self) -> None:
        """A client registered ahead authenticates at the token endpoint as the server says it accepts."""
        info = self.context.client_info
        if info is None or self.settings.client_id is None or info.client_id != self.settings.client_id:
            return
        if info.client_secret is None:
            info.token_endpoint_auth_method = "none"
            return
        supported = (
            self.context.oauth_metadata.token_endpoint_auth_methods_supported
            if self.context.oauth_metadata
            else None
        )
        # RFC 8414: no list means client_secret_basic.
        info.token_endpoint_auth_method = (
            "client_secret_post"
            if supported and "client_secret_basic" not in supported and "client_secret_post" in supported
            else "client_secret_basic"
        )


def server_oauth(
    config: ServerConfig, *, sign_in: SignIn | None = None, store: TokenStore | None = None
) -> ServerOAuth:
    """The OAuth provider for a remote server's HTTP client (every http and sse server gets one).

    A server that never answers 401 costs nothing: the provider only reads its token file.
    """
    assert config.url is not None
    settings = config.oauth or OAuthSettings()
    client = None
    if settings.client_id is not None:
        client = OAuthClientInformationFull(
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            redirect_uris=[sign_in.redirect_uri if sign_in else PLACEHOLDER_REDIRECT],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_basic" if settings.client_secret else "none",
        )
    if store is None:
        # A login starts anew: stored tokens are replaced only once new ones arrive.
        redirect_uri = sign_in.redirect_uri if sign_in else None
        fresh = sign_in is not None and sign_in.fresh
        store = TokenStore(config.url, client=client, redirect_uri=redirect_uri, fresh=fresh)
    return ServerOAuth(config, store, sign_in)


def _www_auth_error(response: httpx2.Response) -> str | None:
    match = re.search(r'error="?([A-Za-z_]+)', response.headers.get("WWW-Authenticate", ""))
    return match.group(1) if match else None


def _safe_scope(response: httpx2.Response) -> str:
    """The scope a server challenged with, as far as it is made of scope characters (it is shown)."""
    match = re.search(r'scope="([^"]*)"', response.headers.get("WWW-Authenticate", ""))
    if not match:
        return ""
    words = [w for w in match.group(1).split() if re.fullmatch(r"[!#-\[\]-~]{1,64}", w)]
    return " ".join(words[:10])


def _union(scope: str | None, extra: list[str]) -> str | None:
    words = (scope or "").split()
    words += [s for s in extra if s not in words]
    return " ".join(words) or None


def _covers(granted: str | None, wanted: str | None) -> bool:
    """Whether tokens granted ``granted`` already hold every scope of ``wanted`` (unknown: assume so)."""
    if granted is None or not wanted:
        return True
    return set(wanted.split()) <= set(granted.split())


class _QuietSignIn(logging.Filter):
    """The SDK logs every error of its flow with a traceback; ours are reported, in a line, by the caller."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, (SignInRequired, SignInFailed))  # ours: the caller reports them


logging.getLogger("mcp.client.auth.oauth2").addFilter(_QuietSignIn())
