"""ServerConnection: one MCP server, one owner task, on the hub's event loop.

The MCP client is entered and left by the same task (the SDK's cancel scopes demand it); other tasks
on the same loop make concurrent calls through it. When a stdio server dies (or the connection to a
remote one drops), the next call starts (or reaches) it again once and is sent to the new connection.
A remote server that cannot be reached is tried again at most every ``RECONNECT_BACKOFF`` seconds, and no
call waits for a connection longer than its own timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import mcp_types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.dispatcher import CallOptions
from mcp_types.jsonrpc import CONNECTION_CLOSED, INVALID_REQUEST
from pydantic import ValidationError

from ..config import ServerConfig
from ..errors import ServerError
from ..toolspec import ToolSpec
from .stdio import DEFAULT_MAX_RESULT_BYTES, StdoutNoise, stdio_transport

__all__ = ["ProgressCallback", "ServerConnection", "ServerState"]

log = logging.getLogger(__name__)

ServerState = Literal["connecting", "ready", "failed", "disabled", "closed"]
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]

_MAX_PAGES = 1000  # a server that pages forever must not hang the hub

RECONNECT_BACKOFF = 2.0
"""Seconds after a failed attempt to reach a remote server during which calls fail at once with its error
(an attempt at a host that does not answer costs up to its connect timeout: not one per call)."""


class ServerConnection:
    """A live connection to one configured MCP server."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        log_dir: Path,
        connect_timeout: float,
        on_tools_changed: Callable[[ServerConnection], None],
    ) -> None:
        self.config = config
        self.name = config.name
        self.state: ServerState = "disabled" if config.disabled else "connecting"
        self.error: str | None = None
        self._tools: dict[str, ToolSpec] = {}
        self.warnings: list[str] = []
        self.protocol_version: str | None = None
        self.server_name: str | None = None
        self.restarts = 0
        """How many times the connection was made again (a stdio server restarted, a remote one reached
        again) after it was lost; failed attempts do not count."""
        self.log_path: Path | None = None
        self.stdout_noise = StdoutNoise()
        """Lines a stdio server wrote to stdout that are not JSON-RPC, counted over every (re)start."""
        if config.transport == "stdio":
            log_dir.mkdir(parents=True, exist_ok=True)
            self.log_path = log_dir / f"{_safe_file_name(config.name)}.stderr.log"
        self.connect_timeout: float = config.connect_timeout or connect_timeout
        """Seconds to start the server and list its tools: its ``connectTimeout``, else the hub's default."""
        self._on_tools_changed = on_tools_changed
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._restart_lock: asyncio.Lock | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._retry_at: float | None = None
        """For a remote server whose last start failed: the loop time before which calls fail at once."""
        self._down_reported = False
        self._generation = 0
        self._closing = False
        self._refreshing: asyncio.Task[None] | None = None
        self._refresh_again = False

    @property
    def tools(self) -> list[ToolSpec]:
        """The server's tools as last listed, in its order."""
        return list(self._tools.values())

    def tool(self, name: str) -> ToolSpec | None:
        """The tool with this exact name, if the server listed one."""
        return self._tools.get(name)

    @property
    def effective_state(self) -> ServerState:
        """The state, noticing a connection that ended under us (a stdio server that exited)."""
        if self.state == "ready" and self._transport_closed():
            return "failed"
        return self.state

    async def start(self) -> None:
        """Connect and list tools; on failure record why (never raise: one server must not block others)."""
        if self.config.disabled:
            return
        await self._stop_owner()  # never two owners: a second start replaces the first cleanly
        self._closing = False
        self.state = "connecting"
        self.error = None
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._generation += 1
        self._owner = asyncio.create_task(self._own(), name=f"mcp-server-{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready.wait()), self.connect_timeout)
        except TimeoutError:
            self._fail(
                f"did not finish connecting within {self.connect_timeout:g} s; if it is only slow to start, "
                'raise "connectTimeout" (seconds) in its config entry'
            )
            await self._stop_owner()
        except BaseException:
            await asyncio.shield(self._stop_owner())  # interrupted: leave no server process behind
            raise
        if self._client is None:  # it failed, and said why (self.error)
            if self.config.transport != "stdio":
                self._retry_at = asyncio.get_running_loop().time() + RECONNECT_BACKOFF
            return
        self._retry_at = None
        self._on_tools_changed(self)

    async def close(self) -> None:
        """Disconnect (and stop a stdio server process); calls still running fail, none restarts it."""
        self._closing = True
        if self._refreshing is not None:
            self._refreshing.cancel()
        if self._reconnecting is not None:  # it may wait its connect timeout for a host that hangs
            self._reconnecting.cancel()
            await asyncio.gather(self._reconnecting, return_exceptions=True)
        async with self._lock():
            await self._stop_owner()
        if self.state != "disabled":
            self.state = "closed"

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None,
        progress: ProgressCallback | None,
    ) -> dict[str, Any]:
        """Send tools/call and return the CallToolResult in wire form (camelCase JSON).

        A connection found gone before the call (a stdio server that exited, a remote one that went away)
        is made again once and the call sent to the new one. One lost during the call is made again
        too, but the call is sent again only if the tool says repeating it is harmless (readOnlyHint or
        idempotentHint), or if the server refused it unseen (an HTTP server that restarted has forgotten
        the session): otherwise it might run twice. A repeated call is never repeated again.

        ``timeout`` bounds the whole call, waiting for the connection to be made (again) included.
        """
        left = _time_left(timeout)
        await self.ensure_connected(left())
        if self.state == "ready" and self._transport_closed():
            await self._restart_once(self._generation, None, left())  # never sent: nothing repeats
        generation = self._generation
        try:
            return await self._send_call(tool, arguments, left(), progress)
        except MCPError as exc:
            if self._closing or not (exc.code == CONNECTION_CLOSED or self._session_lost(exc)):
                raise
            lost = exc
        await self._restart_once(generation, lost, left())
        if not self._session_lost(lost) and not self._safe_to_repeat(tool):
            raise ServerError(
                f"{self._lost_phrase()} during the call to {tool!r}, which may or may not have run; "
                f"{self._back_phrase()}: call again if repeating the call is safe",
                server=self.name,
                log_path=self.log_path_str(),
            ) from lost
        try:
            return await self._send_call(tool, arguments, left(), progress)
        except MCPError as again:
            if again.code != CONNECTION_CLOSED:
                raise
            raise ServerError(
                f"{self._lost_phrase()} again when the call to {tool!r} was repeated (the first attempt "
                f"had ended the same way and {self._back_phrase()}); it is not repeated a third time. "
                f"{self._lost_advice()}",
                server=self.name,
                log_path=self.log_path_str(),
            ) from again

    async def ensure_connected(self, timeout: float | None = None) -> None:
        """Before a call: wait for a connection being made, make a lost remote connection again.

        Args:
            timeout: seconds to wait at most (the call's own timeout); None: the connect timeout.

        Raises:
            ServerError: the server is not connected (it failed to start, is disabled, cannot be
                reached, or was still connecting when ``timeout`` ran out); the message says why.
        """
        if self._closing:
            raise ServerError("the hub is closing", server=self.name)
        if self.state == "connecting":
            if not await self.wait_settled(timeout):
                raise self._not_ready_within(timeout)
        elif self.state == "failed" and self.config.transport != "stdio":
            await self._restart_once(self._generation, None, timeout)  # down at start, or dropped since
        if self.state == "disabled":
            raise ServerError('disabled in the config ("disabled": true)', server=self.name)
        if self.state != "ready":
            reason = self.error or self.state
            raise ServerError(f"not connected ({reason})", server=self.name, log_path=self.log_path_str())

    async def wait_settled(self, timeout: float | None = None) -> bool:
        """Wait while the server is connecting, at most ``timeout`` seconds; False if it still is.

        Without a timeout the wait ends with the server's own start, within its connect timeout.
        """
        loop = asyncio.get_running_loop()
        # A start always ends within its connect timeout; the 5 s more only keep a bug from hanging a call.
        deadline = loop.time() + (self.connect_timeout + 5 if timeout is None else timeout)
        while self.state == "connecting":
            ready = self._ready
            try:
                await asyncio.wait_for(asyncio.shield(ready.wait()), max(0.0, deadline - loop.time()))
            except TimeoutError:
                return False
            if ready is self._ready:
                break  # the start this waited for is over (a new start would have made a new event)
        return True

    def schedule_refresh(self) -> None:
        """List tools again soon (after notifications/tools/list_changed); bursts collapse into one."""
        if self._refreshing is not None and not self._refreshing.done():
            self._refresh_again = True
            return
        self._refreshing = asyncio.get_running_loop().create_task(self._refresh_loop())

    async def refresh_tools(self) -> None:
        """List tools again now and tell the hub."""
        if self._client is None:
            return
        self._tools = await self._list_tools(self._client)
        self._on_tools_changed(self)

    async def _refresh_loop(self) -> None:
        while True:
            self._refresh_again = False
            try:
                await self.refresh_tools()
            except Exception as exc:
                log.warning("server %r: could not refresh its tools: %s", self.name, exc)
            if not self._refresh_again:
                return

    # -- internals ------------------------------------------------------------------------------

    async def _send_call(
        self, tool: str, arguments: dict[str, Any], timeout: float | None, progress: ProgressCallback | None
    ) -> dict[str, Any]:
        client = self._require_client()
        # session.send_request rather than client.call_tool: call_tool raises (and loses the result)
        # when structuredContent violates the tool's own outputSchema, which real servers do; the hub
        # checks that itself and warns instead.
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=tool, arguments=arguments))
        result = await client.session.send_request(
            request,
            types.CallToolResult,
            request_read_timeout_seconds=timeout,
            progress_callback=_adapt_progress(progress) if progress is not None else None,
        )
        dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        if dumped.get("resultType") == "complete":
            del dumped["resultType"]  # said only by 2026-07-28 connections: records look alike either way
        return dumped

    def _lock(self) -> asyncio.Lock:
        # Created lazily on the running loop: a hub closed and started again may run on a new loop.
        if self._restart_lock is None:
            self._restart_lock = asyncio.Lock()
        return self._restart_lock

    def _safe_to_repeat(self, tool: str) -> bool:
        spec = self.tool(tool)
        hints = (spec.annotations or {}) if spec else {}
        return bool(hints.get("readOnlyHint") or hints.get("idempotentHint"))

    def _session_lost(self, exc: MCPError) -> bool:
        """Whether a Streamable HTTP server refused the request because it no longer knows our session.

        A server that restarted answers HTTP 404 to the old session id; the SDK reports it as
        INVALID_REQUEST, with the server's message ("Session not found") or its own ("Session
        terminated"). The request did not run, and the spec says to start a new session.
        """
        return (
            self.config.transport == "http"
            and exc.code == INVALID_REQUEST
            and "session" in (exc.message or "").lower()
        )

    def _lost_phrase(self) -> str:
        if self.config.transport == "stdio":
            return "the server exited"
        return f"the connection to {self.config.url} was lost"

    def _back_phrase(self) -> str:
        return "it was restarted" if self.config.transport == "stdio" else "it was reconnected"

    def _lost_advice(self) -> str:
        if self.config.transport == "stdio":
            return "Its stderr log may say why it exits; the next call starts it again."
        return "Check the server; the next call connects again."

    def _transport_closed(self) -> bool:
        """Whether the client's transport has ended (a stdio server that exited is seen within ~10 ms).

        Reads a private attribute of the SDK's dispatcher (pinned to mcp<3); the reconnect tests run it.
        """
        if self._client is None:
            return False
        dispatcher = getattr(self._client.session, "_dispatcher", None)
        return bool(getattr(dispatcher, "_closed", False))

    def _require_client(self) -> Client:
        if self._client is None or self.state != "ready":
            reason = self.error or self.state
            raise ServerError(f"not connected ({reason})", server=self.name, log_path=self.log_path_str())
        return self._client

    async def _restart_once(self, generation: int, cause: MCPError | None, timeout: float | None) -> None:
        """Make the lost connection again, once for all the calls that found it gone of ``generation``.

        The attempt is a task of its own: a call whose ``timeout`` runs out leaves it going, and later
        calls wait for it. After a failed attempt at a remote server, calls fail at once with its error
        for ``RECONNECT_BACKOFF`` seconds.

        Raises:
            ServerError: the connection was not made again (or not within ``timeout``).
        """
        if self._closing:
            raise ServerError("the hub is closing", server=self.name) from cause
        attempt = self._reconnecting
        if (attempt is None or attempt.done()) and generation == self._generation:
            if self._retry_at is not None and asyncio.get_running_loop().time() < self._retry_at:
                raise ServerError(self._down_message(), server=self.name) from cause
            attempt = self._reconnecting = asyncio.create_task(
                self._reconnect(), name=f"reconnect-{self.name}"
            )
        if attempt is not None and not attempt.done():
            try:
                await asyncio.wait_for(asyncio.shield(attempt), timeout)
            except TimeoutError:
                raise self._not_ready_within(timeout) from cause
        if self.state == "connecting" and not await self.wait_settled(timeout):
            raise self._not_ready_within(timeout) from cause  # started again meanwhile by someone else
        if self.state != "ready":
            raise ServerError(self._down_message(), server=self.name, log_path=self.log_path_str()) from cause

    async def _reconnect(self) -> None:
        """One attempt to make the connection again (the task ``_restart_once`` waits for)."""
        async with self._lock():
            if self._closing:
                return
            await self.start()
        if self.state == "ready":
            self.restarts += 1
            self._down_reported = False
            log.info("server %r: connected again", self.name)
        elif not self._down_reported:  # once while it stays down: a down server must not flood the log
            self._down_reported = True
            log.warning("server %r: %s", self.name, self._down_message())

    def _down_message(self) -> str:
        """Why the connection could not be made again, and (remote) when the next attempt can be."""
        reason = self.error or self.state
        if self.config.transport == "stdio":
            return f"the server exited and did not come back: {reason}"
        wait = RECONNECT_BACKOFF
        if self._retry_at is not None:
            wait = max(0.0, self._retry_at - asyncio.get_running_loop().time())
        return (
            f"cannot be reached at {self.config.url} ({reason}); calls fail at once until it is tried "
            f"again in {wait:.1f} s"
        )

    def _not_ready_within(self, timeout: float | None) -> ServerError:
        waited = self.connect_timeout + 5 if timeout is None else timeout
        where = f" to {self.config.url}" if self.config.transport != "stdio" else ""
        return ServerError(
            f"still connecting{where}: not ready within {waited:g} s, this call's timeout; it goes on "
            f"connecting in the background (for up to {self.connect_timeout:g} s, its connectTimeout) "
            "and later calls use it once it is ready",
            server=self.name,
            log_path=self.log_path_str(),
        )

    async def _own(self) -> None:
        """The owner task: enter the client, list tools, hold the connection until told to stop."""
        try:
            async with Client(
                self._transport(), mode=self._mode(), message_handler=self._on_message
            ) as client:
                self.protocol_version = client.protocol_version
                info = client.server_info
                self.server_name = info.name if info else None
                self._tools = await self._list_tools(client)
                self._client = client
                self.state = "ready"
                self._ready.set()
                await self._stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # ExceptionGroup from the transport's task group included
            self._fail(_describe(exc))
        finally:
            self._client = None
            self._ready.set()

    async def _stop_owner(self) -> None:
        """End the owner task: politely when it holds a connection, at once when still connecting."""
        connected = self._client is not None
        self._stop.set()
        owner, self._owner = self._owner, None
        if owner is None or owner.done():
            return
        if connected:
            try:
                await asyncio.wait_for(asyncio.shield(owner), 5.0)
                return
            except (TimeoutError, Exception):
                pass
        owner.cancel()
        with contextlib.suppress(BaseException):
            await owner

    def _transport(self) -> Any:
        cfg = self.config
        if cfg.transport == "stdio":
            assert cfg.command is not None and self.log_path is not None
            params = StdioServerParameters(
                command=cfg.command, args=list(cfg.args), env=dict(cfg.env) or None, cwd=cfg.cwd
            )
            # Ours, not the SDK's stdio_client: linear reading, a size cap, a capped stderr log (stdio.py).
            return stdio_transport(
                params,
                server=self.name,
                log_path=self.log_path,
                max_line_bytes=cfg.max_result_bytes or DEFAULT_MAX_RESULT_BYTES,
                noise=self.stdout_noise,
            )
        assert cfg.url is not None
        headers = dict(cfg.headers)
        if cfg.transport == "sse":
            return sse_client(cfg.url, headers=headers or None)
        return _streamable_http(cfg.url, headers)

    def _mode(self) -> Any:
        return self.config.protocol

    async def _list_tools(self, client: Client) -> dict[str, ToolSpec]:
        raw: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await self._list_page(client, cursor)
            raw.extend(page.get("tools") or [])
            cursor = page.get("nextCursor")
            if not cursor:
                break
        specs = [ToolSpec.from_wire(self.name, tool) for tool in raw if isinstance(tool, dict)]
        self.warnings = [f"{self.name}: {w}" for spec in specs for w in spec.warnings]
        for warning in self.warnings:
            log.warning("%s", warning)
        return {spec.name: spec for spec in specs}

    async def _list_page(self, client: Client, cursor: str | None) -> dict[str, Any]:
        try:
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        except ValidationError:
            # The SDK refuses listings that break the spec (an inputSchema without "type" is common in
            # the wild). Ask again and take the raw answer; ToolSpec.from_wire repairs it with a warning.
            return await _raw_request(client, "tools/list", {"cursor": cursor} if cursor else None)
        dumped: dict[str, Any] = page.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            # Never await session I/O inside the handler: it runs on the dispatcher's read loop.
            self.schedule_refresh()

    def _fail(self, reason: str) -> None:
        self.state = "failed"
        self.error = reason
        self._ready.set()

    def log_path_str(self) -> str | None:
        """The stderr log's path as text, for messages (None for remote servers)."""
        return str(self.log_path) if self.log_path else None


@contextlib.asynccontextmanager
async def _streamable_http(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """Streamable HTTP with our headers; the HTTP client we create is ours to close."""
    async with (
        create_mcp_http_client(headers=headers or None) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def _time_left(timeout: float | None) -> Callable[[], float | None]:
    """The seconds left of ``timeout`` from now, each time it is asked (None: no limit)."""
    if timeout is None:
        return lambda: None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    return lambda: max(0.0, deadline - loop.time())


def _adapt_progress(callback: ProgressCallback) -> Any:
    async def forward(progress: float, total: float | None, message: str | None) -> None:
        outcome = callback(progress, total, message)
        if asyncio.iscoroutine(outcome):
            await outcome

    return forward


async def _raw_request(client: Client, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """Send a request and return the raw JSON result, skipping the SDK's result validation.

    Uses two private attributes of the SDK's ClientSession (pinned to ``mcp<3``); the tests run it
    against a server that sends the malformed listings this exists for.
    """
    session = client.session
    data: dict[str, Any] = {"method": method}
    if params:
        data["params"] = params
    opts: CallOptions = {}
    session._stamp(data, opts)
    result: dict[str, Any] = await session._dispatcher.send_raw_request(method, data.get("params"), opts)
    return result


def _describe(exc: BaseException) -> str:
    """One line that says why a connection failed, digging through exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return "the server closed the connection during start-up (see its stderr log)"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def _safe_file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "server"
