"""Where a configured model is served, which API key it takes, and what its failures mean to a user.

Key rules (docs/llm.md): ``apiKeyEnv`` names the variable. Without it, the official endpoints read
``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``, and any other endpoint gets a placeholder: a default key is
never sent to a third party by accident. A local endpoint (Ollama, vLLM, llama.cpp, LM Studio on this
machine or the LAN) works without a key; a missing key is an error before any request everywhere else.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from ..core.errors import LLMAuthError, LLMError, LLMModelNotFoundError, LLMUnreachableError

__all__ = ["PLACEHOLDER_KEY", "Endpoint", "Provider"]

Provider = Literal["openai", "anthropic"]

PLACEHOLDER_KEY = "not-needed"
"""Sent where no key is needed: the SDKs insist on one, local servers ignore it."""

_OFFICIAL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
_DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_LOCAL_NAMES = {"localhost", "host.docker.internal", "host.containers.internal"}


@dataclass(frozen=True)
class Endpoint:
    """One configured model's address and key variable, and the error messages that name them."""

    provider: Provider
    ref: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None

    @property
    def url(self) -> str:
        """The base URL the SDK is given (the official one when none is configured)."""
        return (self.base_url or _OFFICIAL[self.provider]).rstrip("/")

    @property
    def official(self) -> bool:
        """Whether this is the provider's own service (where a key is always needed)."""
        return urlsplit(self.url).hostname == urlsplit(_OFFICIAL[self.provider]).hostname

    @property
    def local(self) -> bool:
        """Whether the host is this machine or a private network (a local model server needs no key)."""
        host = urlsplit(self.url).hostname or ""
        if host in _LOCAL_NAMES or host.endswith((".localhost", ".local")):
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified

    @property
    def key_env(self) -> str | None:
        """The variable the key is read from: ``apiKeyEnv``, the official service's default, or None."""
        if self.api_key_env:
            return self.api_key_env
        return _DEFAULT_KEY_ENV[self.provider] if self.official else None

    @property
    def entry(self) -> str:
        """How messages name the config entry."""
        return f'models["{self.ref}"]'

    def api_key(self, env: Mapping[str, str] | None = None) -> str:
        """The key to send; a placeholder where none is needed; LLMAuthError (no request made) if missing."""
        env = os.environ if env is None else env
        name = self.key_env
        key = env.get(name, "").strip() if name else ""
        if key:
            return key
        if name is None or self.local:
            return PLACEHOLDER_KEY
        raise LLMAuthError(
            f"{self.entry}: no API key for {self.url}: the environment variable {name} is not set. "
            f"Set it where Jupyter starts (export {name}=...), or name the variable that holds the key "
            f'with "apiKeyEnv" in the model\'s config entry.',
            ref=self.ref,
        )

    # -- failures --------------------------------------------------------------------------------------

    def unreachable(self, cause: BaseException | None) -> LLMUnreachableError:
        """The endpoint could not be reached (refused, DNS, TLS, a dropped connection)."""
        why = f" ({cause})" if cause is not None and str(cause) else ""
        return LLMUnreachableError(
            f"{self.entry}: cannot reach {self.url}{why}. Check that the server is running and that "
            '"baseUrl" in the config entry is right.',
            ref=self.ref,
        )

    def timed_out(self) -> LLMUnreachableError:
        """The endpoint took longer than the request timeout."""
        return LLMUnreachableError(
            f"{self.entry}: {self.url} did not answer in time. Check that the server is running and not "
            "overloaded, or raise the timeout.",
            ref=self.ref,
        )

    def status_error(self, status: int, body: Any, retries: int) -> LLMError:
        """The error for an HTTP error status (429 and 5xx only arrive here after ``retries`` retries)."""
        said = _server_message(body)
        said = f" The server said: {said}" if said else ""
        if status == 401:
            if self.key_env is None:
                fix = (
                    f'It needs an API key: add "apiKeyEnv": "NAME_OF_VARIABLE" to {self.entry} and export '
                    "the key in that variable."
                )
            else:
                fix = f"Check the key in the environment variable {self.key_env}."
            return LLMAuthError(
                f"{self.entry}: {self.url} refused the API key (HTTP 401). {fix}{said}",
                ref=self.ref,
                status=status,
            )
        if status == 403:
            return LLMAuthError(
                f'{self.entry}: {self.url} denied this key access to model "{self.model}" (HTTP 403).{said}',
                ref=self.ref,
                status=status,
            )
        if status == 404:
            return LLMModelNotFoundError(
                f'{self.entry}: {self.url} does not know the model "{self.model}" (HTTP 404). Change '
                f'"model" in {self.entry} to a model this server has (GET '
                f'{self.url.removesuffix("/v1")}/v1/models lists them), or check "baseUrl".{said}',
                ref=self.ref,
                status=status,
            )
        if status == 429:
            return LLMError(
                f"{self.entry}: {self.url} is rate limiting requests (HTTP 429), still after {retries} "
                f"retries. Wait a little and try again.{said}",
                ref=self.ref,
                status=status,
            )
        if status >= 500:
            return LLMError(
                f"{self.entry}: {self.url} failed with HTTP {status}, still after {retries} retries. Try "
                f"again later.{said}",
                ref=self.ref,
                status=status,
            )
        return LLMError(
            f"{self.entry}: {self.url} rejected the request (HTTP {status}).{said}",
            ref=self.ref,
            status=status,
        )

    def stream_error(self, message: str) -> LLMError:
        """An error event in the middle of a streamed answer."""
        return LLMError(f"{self.entry}: {self.url} stopped the answer with an error: {message}", ref=self.ref)


def _server_message(body: Any) -> str:
    """The human part of an error body (both services nest it under ``error.message``)."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return body if isinstance(body, str) else ""
