"""How many programs ``codemode serve`` runs at once, and a queue behind them that refuses, never hangs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ..core.errors import ServerBusyError

__all__ = ["Admission"]


class Admission:
    """At most ``pool_size`` programs run; at most ``queue_limit`` wait; one more is refused at once.

    A client that gets the refusal can retry later; the alternative, an unbounded queue, turns a burst
    into calls that time out at the client with nothing said about why.
    """

    def __init__(self, pool_size: int, queue_limit: int) -> None:
        self.pool_size = pool_size
        self.queue_limit = queue_limit
        self._places = asyncio.Semaphore(pool_size)
        self.running = 0
        self.waiting = 0

    @asynccontextmanager
    async def place(self) -> AsyncIterator[None]:
        """Hold a place for one program; waits in the queue, or raises ServerBusyError when it is full.

        Raises:
            ServerBusyError: ``pool_size`` programs run and ``queue_limit`` wait already.
        """
        if self._places.locked() and self.waiting >= self.queue_limit:
            raise ServerBusyError(
                f"codemode serve is busy: {self.running} programs are running (defaults.serve.poolSize is "
                f"{self.pool_size}) and {self.waiting} are waiting (defaults.serve.queueLimit is "
                f"{self.queue_limit}); retry in a moment, or raise those limits in the config"
            )
        self.waiting += 1
        try:
            await self._places.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            self._places.release()
