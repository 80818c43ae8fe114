"""One SDK client per event loop, rebuilt when the key changes.

An SDK client's connection pool belongs to the event loop it was first used on, and a kernel asks a
model from more than one loop (a cell's loop, the executor's thread for ``llm()``). Building a client
costs tens of milliseconds (TLS setup), so one is kept per loop instead of one per request.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

__all__ = ["ClientCache"]


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
            # The old client belongs to another loop (or an old key): it cannot be closed from here, and
            # its idle connections go when it is collected.
            self._client = self._make(key)
            self._loop = weakref.ref(loop)
            self._key = key
        return self._client

    async def aclose(self) -> None:
        """Close the client of the running loop, if it is the one cached."""
        client, self._client = self._client, None
        if client is not None and self._loop is not None and self._loop() is asyncio.get_running_loop():
            await client.close()
