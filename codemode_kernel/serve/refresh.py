"""Keep ``execute_python``'s description true when the servers' tools change while ``serve`` runs.

An upstream server may announce new tools (``notifications/tools/list_changed``), or reconnect with other
ones; the worker's functions follow at once (the executor prepares workers for the current tools), and this
module makes the description follow too and tells the clients: ``notifications/tools/list_changed`` on the
connections of clients on handshake-era protocols, and an event for ``subscriptions/listen`` streams on the
2026-07-28 protocol. The resources (the workspace's artifacts) change when a program stores one: the same
clients are told ``notifications/resources/list_changed`` (``resources_changed``). Since it sends both,
its middleware also declares ``tools.listChanged`` and ``resources.listChanged`` in the ``initialize``
result (the SDK's MCPServer declares false, having no setting for it; on 2026-07-28 the SDK derives the
flags from ``subscriptions/listen``, which serve offers).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.subscriptions import ResourcesListChanged, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

__all__ = ["ToolListRefresher"]

log = logging.getLogger(__name__)

_KEPT_CONNECTIONS = 256
"""Clients (connections) remembered for list_changed notifications; the oldest are forgotten first."""


class ToolListRefresher:
    """Rebuilds the description when the hub says the tools changed, then notifies the clients.

    ``describe`` gives the description for the current tools; ``replace`` puts a new one in place (on the
    MCP server's loop, so no request sees the tool missing). The server's loop is learnt from the first
    request (``middleware``); a change before any request is applied by that request.
    """

    def __init__(
        self, describe: Callable[[], str], replace: Callable[[str], None], bus: InMemorySubscriptionBus
    ) -> None:
        self._describe = describe
        self._replace = replace
        self._bus = bus
        self._current = describe()
        self._stale = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._peers: OrderedDict[str, ServerSession] = OrderedDict()

    @property
    def description(self) -> str:
        """The description in place now."""
        return self._current

    def on_tools_changed(self) -> None:
        """The hub's listener (on the hub's thread): refresh on the server's loop, or at the next request."""
        self._stale = True
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(lambda: asyncio.ensure_future(self._refresh_and_notify()))

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        """Learn the loop and the client; apply a pending change before the request sees the tools.

        An ``initialize`` result gets ``listChanged: true`` for tools and resources: this server does send
        those notifications.
        """
        self._loop = asyncio.get_running_loop()
        self._remember(ctx)
        if self._stale:
            self._refresh()
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            for kind in ("tools", "resources"):
                declared = result.get("capabilities", {}).get(kind)
                if isinstance(declared, dict):
                    declared["listChanged"] = True
        return result

    async def resources_changed(self) -> None:
        """Tell the clients the resources changed (a program stored an artifact)."""
        await self._bus.publish(ResourcesListChanged())
        for session in list(self._peers.values()):
            with contextlib.suppress(Exception):  # a client that went away is simply not told
                await session.send_resource_list_changed()

    def _remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return  # no connection to notify: these clients listen on subscriptions/listen
        headers = getattr(ctx.request, "headers", None)
        key = headers.get("mcp-session-id") if headers is not None else "stdio"
        if not key:
            return  # an HTTP initialize: its MCP session is remembered from its next request, by its id
        self._peers[key] = ctx.session
        self._peers.move_to_end(key)
        while len(self._peers) > _KEPT_CONNECTIONS:
            self._peers.popitem(last=False)

    def _refresh(self) -> bool:
        self._stale = False
        new = self._describe()
        if new == self._current:
            return False
        self._replace(new)
        self._current = new
        return True

    async def _refresh_and_notify(self) -> None:
        if not self._stale or not self._refresh():
            return
        await self._bus.publish(ToolsListChanged())
        for session in list(self._peers.values()):
            with contextlib.suppress(Exception):  # a client that went away is simply not told
                await session.send_tool_list_changed()
