"""Where a remote server's OAuth tokens live: one file per server URL, in the user's codemode directory.

The directory (``$XDG_CONFIG_HOME/codemode/oauth`` or ``~/.config/codemode/oauth``) is outside every
workspace and hidden from programs with the rest of the user config (the executor pool hides
``user_config_dir()``). Files are keyed by the server's URL, not its name: two configs that name the same
URL share a sign-in, and a renamed server keeps its tokens. Each file is written whole (``atomic_file``),
mode 0600, in a 0700 directory. Nothing here logs a token or puts one in an error message.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken, ProtectedResourceMetadata
from pydantic import ValidationError

from ..atomic_file import write_atomically
from ..config import user_config_dir

__all__ = ["TokenStore", "oauth_dir", "server_key"]

log = logging.getLogger(__name__)


def oauth_dir(env: dict[str, str] | None = None) -> Path:
    """The directory of the token files: ``oauth`` in the user's codemode directory."""
    return user_config_dir(env) / "oauth"


def server_key(url: str) -> str:
    """A file name for a server URL: the same for spellings that name the same endpoint.

    Scheme and host are lowercased and a trailing slash and fragment dropped; the query is kept (it may
    select a tenant).
    """
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    canonical = urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


class TokenStore:
    """The SDK's ``TokenStorage`` for one server URL, backed by one JSON file.

    Besides tokens and the registered client it keeps when the access token expires (an absolute time:
    the SDK keeps only ``expires_in``, which means nothing after a restart) and the metadata discovered at
    sign-in (the token endpoint a refresh must go to).

    Args:
        url: the server's MCP endpoint.
        directory: where the files are (``oauth_dir()`` by default).
        client: a client registered ahead (the config's ``oauth.clientId``): used instead of a stored
            registration, and tokens issued to another client are ignored.
        redirect_uri: for a sign-in: a stored registration is used only if it lists this redirect URI
            (the loopback port changes between sign-ins), else the client registers again.
        fresh: for a sign-in: stored tokens are not offered (the person signs in anew); they are
            replaced only when the new ones arrive, so a sign-in that fails loses nothing.
    """

    def __init__(
        self,
        url: str,
        *,
        directory: Path | None = None,
        client: OAuthClientInformationFull | None = None,
        redirect_uri: str | None = None,
        fresh: bool = False,
    ) -> None:
        self.url = url
        self.directory = directory or oauth_dir()
        self.path = self.directory / f"{server_key(url)}.json"
        self._configured = client
        self._redirect_uri = redirect_uri
        self._fresh = fresh
        self._stamp: tuple[int, int] | None = None

    # -- the SDK's TokenStorage protocol ----------------------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, if they were issued to the current client."""
        record = self._read()
        data = record.get("tokens")
        if self._fresh or not isinstance(data, dict) or not self._same_client(record):
            return None
        try:
            return OAuthToken.model_validate(data)
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Keep new tokens, and when the access token expires."""
        record = self._read()
        record["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        record["expiresAt"] = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        record["issuedTo"] = self._client_id(record)
        self._fresh = False
        self._write(record)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The config's client, else the one registered at sign-in."""
        if self._configured is not None:
            return self._configured
        data = self._read().get("client")
        if not isinstance(data, dict):
            return None
        try:
            client = OAuthClientInformationFull.model_validate(data)
        except ValidationError:
            return None
        if self._redirect_uri is not None:  # a sign-in: the registration must fit it
            if self._redirect_uri not in {str(u) for u in client.redirect_uris or ()}:
                return None
            wanted = set(self.wanted_scope())
            if client.scope is not None and not wanted <= set(client.scope.split()):
                return None  # registered for fewer scopes than a step-up asked for: register again
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Keep a client registered at sign-in (dynamic registration or CIMD)."""
        if self._configured is not None and client_info.client_id == self._configured.client_id:
            return  # the config's client: nothing to remember
        record = self._read()
        record["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self._write(record)

    # -- what the SDK does not keep ----------------------------------------------------------------

    def expires_at(self) -> float | None:
        """When the stored access token expires (seconds since the epoch); None: unknown or never."""
        value = self._read().get("expiresAt")
        return float(value) if isinstance(value, (int, float)) else None

    def set_discovery(
        self, resource: ProtectedResourceMetadata | None, server: OAuthMetadata | None, server_url: str | None
    ) -> None:
        """Remember the metadata found at sign-in, so a refresh after a restart reaches the token endpoint."""
        record = self._read()
        record["discovery"] = {
            "resource": resource.model_dump(mode="json", exclude_none=True) if resource else None,
            "authorizationServer": server.model_dump(mode="json", exclude_none=True) if server else None,
            "authorizationServerUrl": server_url,
        }
        self._write(record)

    def discovery(self) -> tuple[ProtectedResourceMetadata | None, OAuthMetadata | None, str | None]:
        """The metadata ``set_discovery`` kept (each None when absent or unreadable)."""
        found = self._read().get("discovery")
        if not isinstance(found, dict):
            return None, None, None
        resource = server = None
        try:
            if isinstance(found.get("resource"), dict):
                resource = ProtectedResourceMetadata.model_validate(found["resource"])
            if isinstance(found.get("authorizationServer"), dict):
                server = OAuthMetadata.model_validate(found["authorizationServer"])
        except ValidationError:
            return None, None, None
        url = found.get("authorizationServerUrl")
        return resource, server, url if isinstance(url, str) else None

    def wanted_scope(self) -> list[str]:
        """Scopes a server asked for beyond what was granted (a step-up nobody could sign in for)."""
        value = self._read().get("wantedScope")
        return value.split() if isinstance(value, str) else []

    def want_scope(self, scope: str) -> None:
        """Remember scopes to ask for at the next sign-in (``codemode login`` then asks for them)."""
        record = self._read()
        record["wantedScope"] = scope
        self._write(record)

    def has_tokens(self) -> bool:
        """Whether a sign-in is stored (an access or refresh token for the current client)."""
        record = self._read()
        return isinstance(record.get("tokens"), dict) and self._same_client(record)

    def forget_tokens(self) -> None:
        """Drop the tokens (a refresh the server refused); the client registration stays."""
        record = self._read()
        if record.pop("tokens", None) is not None:
            record.pop("expiresAt", None)
            self._write(record)

    def delete(self) -> bool:
        """Forget everything about this server (``codemode logout``); False if nothing was stored."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    def changed(self) -> bool:
        """Whether the file changed since this store last read or wrote it (another process signed in)."""
        return self._file_stamp() != self._stamp

    # -- the file ----------------------------------------------------------------------------------

    def _client_id(self, record: dict[str, Any]) -> str | None:
        if self._configured is not None:
            return self._configured.client_id
        client = record.get("client")
        return client.get("client_id") if isinstance(client, dict) else None

    def _same_client(self, record: dict[str, Any]) -> bool:
        # Tokens issued to another client (the config's clientId changed) would only be refused.
        issued_to = record.get("issuedTo")
        return self._configured is None or issued_to is None or issued_to == self._configured.client_id

    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            info = self.path.stat()
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_ino)

    def _read(self) -> dict[str, Any]:
        self._stamp = self._file_stamp()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            # Never the content: it holds tokens.
            log.warning("ignoring the unreadable sign-in file %s (%s)", self.path, type(exc).__name__)
            return {}
        same = isinstance(data, dict) and server_key(str(data.get("url", ""))) == server_key(self.url)
        return data if same else {"url": self.url}

    def _write(self, record: dict[str, Any]) -> None:
        record["url"] = self.url
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.directory, 0o700)
        write_atomically(self.path, json.dumps(record, indent=1), prefix=".oauth-", sync=True)
        self._stamp = self._file_stamp()
