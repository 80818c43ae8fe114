"""Start-up: every server connects at once, and ``ToolHub.start`` waits only as long as they keep coming.

The rules (docs/hub.md, "Start-up"): until the first server is ready, start-up waits (each server at most
its connect timeout); a server that fails, or a disabled one (never started), does not end that wait,
since a command that is not found fails in milliseconds and says nothing about how long healthy servers
need. After each server that gets ready, it waits for the rest as long again as that took, and at least
``start_wait`` seconds. Servers still connecting then go on in the background.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from .connection import ServerConnection

__all__ = ["ServerStartup"]


class ServerStartup:
    """The start tasks of a hub's servers: who is still connecting, and waiting for them.

    Its coroutines run on the hub's event loop; ``pending`` may be read from any thread.
    """

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[None]] = {}

    @property
    def pending(self) -> list[str]:
        """The servers still connecting, in the order they were started."""
        return [name for name, task in list(self._tasks.items()) if not task.done()]

    async def start(self, connections: Mapping[str, ServerConnection], *, start_wait: float) -> None:
        """Start each server not ready, disabled or starting already, and wait for them by the rules.

        An interrupt (cancellation) stops every start it began: no server is left starting behind it.
        """
        for name, conn in connections.items():
            running = self._tasks.get(name)
            if conn.state not in ("ready", "disabled") and (running is None or running.done()):
                self._tasks[name] = asyncio.create_task(conn.start(), name=f"start-{name}")
        try:
            await self._wait_started(connections, start_wait)
        except asyncio.CancelledError:
            await asyncio.shield(self.stop())
            raise

    async def wait(self, until: Callable[[], bool] | None = None) -> None:
        """Wait while servers are still connecting, or until ``until()`` (asked as each one ends) is True."""
        while (starting := [task for task in self._tasks.values() if not task.done()]) and not (
            until is not None and until()
        ):
            # asyncio.wait never cancels what it waits for: an interrupt here leaves the servers connecting.
            await asyncio.wait(starting, return_when=asyncio.FIRST_COMPLETED)

    async def stop(self) -> None:
        """Cancel every start still running and wait for them to end."""
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def _wait_started(self, connections: Mapping[str, ServerConnection], start_wait: float) -> None:
        loop = asyncio.get_running_loop()
        began = loop.time()
        deadline: float | None = None  # none ready yet: wait for the first (its connect timeout bounds it)
        while starting := {task: name for name, task in self._tasks.items() if not task.done()}:
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            done, _ = await asyncio.wait(starting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if not done:
                return  # the rest are much slower than those before them: they go on in the background
            if any(connections[starting[task]].state == "ready" for task in done):
                ready_at = loop.time()
                deadline = ready_at + max(start_wait, ready_at - began)
