"""What the two SDK-backed chat models share: the endpoint, retries, timeout, clients, config entries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, Self, cast

from ..config.models import ModelConfig
from ._client_cache import C as ClientT
from ._client_cache import ClientCache
from ._endpoint import Endpoint, Provider

__all__ = ["SdkChatModel"]


class SdkChatModel(Generic[ClientT]):
    """A model reached through a vendor SDK's async client; subclasses build the client and the request."""

    provider: str

    def __init__(
        self,
        model: str,
        *,
        ref: str | None,
        url: str | None,
        api_key_env: str | None,
        max_retries: int,
        timeout: float | None,
        env: Mapping[str, str] | None,
    ) -> None:
        self.model = model
        self.ref = ref or model
        self.endpoint = Endpoint(cast(Provider, self.provider), self.ref, model, url, api_key_env)
        self.max_retries = max_retries
        self.timeout = timeout
        self._env = env
        self._clients: ClientCache[ClientT] = ClientCache(self._make_client)

    @classmethod
    def from_config(cls, entry: ModelConfig, **options: Any) -> Self:
        """The model of a config ``models`` entry (the ref stands in for a missing model name)."""
        return cls(  # type: ignore[call-arg]
            entry.model or entry.ref,
            ref=entry.ref,
            base_url=entry.base_url,
            api_key_env=entry.api_key_env,
            **options,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(ref={self.ref!r}, model={self.model!r}, url={self.endpoint.url!r})"

    def _make_client(self, key: str) -> ClientT:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Close the HTTP connections of this loop's client."""
        await self._clients.aclose()
