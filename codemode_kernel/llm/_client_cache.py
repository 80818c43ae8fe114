"""One SDK client per event loop, rebuilt when the key changes, and no idle connections kept.

An SDK client's connections belong to the event loop they were opened on, and a kernel asks a model
from more than one loop (a cell's loop, the executor's thread for ``llm()``, ``asyncio.run`` in a
script). A connection kept alive past its loop can never be closed properly (ResourceWarnings, leaked
sockets), so the clients keep none between requests: a new connection per request costs little next
to a model's answer. Building a client costs tens of milliseconds (TLS setup), so one is kept per loop.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    import httpx2

__all__ = ["ClientCache", "no_idle_connections"]


def no_idle_connections() -> httpx2.Limits:
    """Connection limits for the SDKs' HTTP clients: each connection closes when its response is done."""
    import httpx2  # the SDKs' HTTP library; imported late, like the SDKs (seconds of import time)

    return httpx2.Limits(max_connections=100, max_keepalive_connections=0)


class _Closable(Protocol):
    async def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)


class ClientCache(Generic[C]):
    """Holds the client of the current loop; ``get(key)`` makes one when the loop or the key changed."""

    def __init__(self, make: Callable[[str], C]) -> None:
        self._make = make
        self._client: C | None = None
        self._loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self._key = ""

    def get(self, key: str) -> C:
        """The client for the running loop and this key."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is None or self._loop() is not loop or self._key != key:
            # The old client belongs to another loop (or an old key). It holds no connection between
            # requests, so dropping it leaks nothing.
            self._client = self._make(key)
            self._loop = weakref.ref(loop)
            self._key = key
        return self._client

    async def aclose(self) -> None:
        """Close the client of the running loop, if it is the one cached."""
        client, self._client = self._client, None
        if client is not None and self._loop is not None and self._loop() is asyncio.get_running_loop():
            await client.close()
