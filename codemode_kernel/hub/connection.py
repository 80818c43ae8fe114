"""ServerConnection: one MCP server, one owner task, on the hub's event loop.

The MCP client is entered and left by the same task (the SDK's cancel scopes demand it); other tasks
on the same loop make concurrent calls through it. When a stdio server dies (or the connection to a
remote one drops), the next call starts (or reaches) it again once and is sent to the new connection.
A remote server that cannot be reached is tried again at most every ``RECONNECT_BACKOFF`` seconds, and no
call waits for a connection longer than its own timeout (the rules and messages: ``reconnect.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import mcp_types as types
from mcp import Client, MCPError
from mcp.client._input_required import run_input_required_driver
from mcp.client.session import ClientRequestContext
from mcp_types.jsonrpc import CONNECTION_CLOSED
from pydantic import TypeAdapter

from ..calllog import CallLog
from ..config import ServerConfig
from ..core.errors import ServerError
from ..core.toolspec import ToolSpec
from . import reconnect
from .listing import list_tools
from .log_tail import log_size, read_log_tail
from .reconnect import RECONNECT_BACKOFF
from .server_requests import AskContext, ServerRequests
from .stdio import StdoutNoise
from .transports import describe_failure, needs_sign_in, open_transport, stderr_log_name, uses_oauth

__all__ = ["ProgressCallback", "ServerConnection", "ServerState"]

log = logging.getLogger(__name__)

INPUT_ROUNDS = 10
"""Rounds of questions a 2026-07-28 server may end one call with before the call fails (the SDK's default)."""
_CALL_RESULT: TypeAdapter[types.CallToolResult | types.InputRequiredResult] = TypeAdapter(
    types.CallToolResult | types.InputRequiredResult
)

ServerState = Literal["connecting", "ready", "failed", "signin", "disabled", "closed"]
"""``signin``: a remote server wants its user to sign in first (``codemode login NAME``; hub/auth.py)."""
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]


class ServerConnection:
    """A live connection to one configured MCP server."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        log_dir: Path,
        connect_timeout: float,
        on_tools_changed: Callable[[ServerConnection], None],
        asking: AskContext | None = None,
    ) -> None:
        self.config = config
        self.requests = ServerRequests(config, asking or AskContext(CallLog()))
        """Answers what the server asks during calls (roots, elicitation, sampling)."""
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
        self.log_tail: tuple[str, ...] = ()
        """After a failed start of a stdio server: the last lines it wrote to stderr then (its reason),
        made safe to show (``log_tail.py``)."""
        self._log_start = 0
        self.stdout_noise = StdoutNoise()
        """Lines a stdio server wrote to stdout that are not JSON-RPC, counted over every (re)start."""
        if config.transport == "stdio":
            log_dir.mkdir(parents=True, exist_ok=True)
            self.log_path = log_dir / stderr_log_name(config.name)
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
        self._sign_in_lost: dict[int, str] = {}
        """Per generation: why a ready connection ended wanting a sign-in (what its lost calls say)."""

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
        self.log_tail = ()
        self._log_start = log_size(self.log_path)
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
            self.log_tail = self._read_log_tail()
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
            if self._closing or not (
                exc.code == CONNECTION_CLOSED or reconnect.session_lost(self.config, exc)
            ):
                raise
            lost = exc
        await self._restart_once(generation, lost, left())
        if (reason := self._sign_in_lost.pop(generation, None)) is not None:
            # Ended by the server's auth (a step-up nobody could sign in for): say so, never repeat it.
            raise ServerError(reason, server=self.name) from lost
        if not reconnect.session_lost(self.config, lost) and not reconnect.safe_to_repeat(self.tool(tool)):
            message = reconnect.maybe_ran_message(self.config, tool)
            raise ServerError(message, server=self.name, log_path=self.log_path_str()) from lost
        try:
            return await self._send_call(tool, arguments, left(), progress)
        except MCPError as again:
            if again.code != CONNECTION_CLOSED:
                raise
            message = reconnect.lost_again_message(self.config, tool)
            raise ServerError(message, server=self.name, log_path=self.log_path_str()) from again

    async def reconnect(self) -> None:
        """Connect again now, because the user asked (``%codemode reconnect``): a stdio server is restarted.

        Shares the attempt with calls that found the connection lost (``_restart_once``); the backoff of
        a remote server that was down is dropped, as the user is asking for a try now.
        """
        if self._closing:
            raise ServerError("the hub is closing", server=self.name)
        self._retry_at = None
        attempt = self._reconnecting
        if attempt is None or attempt.done():
            attempt = self._reconnecting = asyncio.create_task(
                self._reconnect(), name=f"reconnect-{self.name}"
            )
        await asyncio.shield(attempt)

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
        elif self.state in ("failed", "signin") and self.config.transport != "stdio":
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
        self._tools, self.warnings = await list_tools(self._client, self.name)
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
        left = _time_left(timeout)
        on_progress = _adapt_progress(progress) if progress is not None else None

        async def send(responses: types.InputResponses | None, state: str | None) -> Any:
            # session.send_request rather than client.call_tool: call_tool raises (and loses the result)
            # when structuredContent violates the tool's own outputSchema, which real servers do; the hub
            # checks that itself and warns instead.
            params = types.CallToolRequestParams(
                name=tool, arguments=arguments, input_responses=responses, request_state=state
            )
            return await client.session.send_request(
                types.CallToolRequest(params=params),
                _CALL_RESULT,
                request_read_timeout_seconds=left(),
                progress_callback=on_progress,
            )

        async def dispatch(key: str, request: Any) -> Any:
            # A 2026-07-28 server asks by ending the call with its questions: the same callbacks answer
            # them as the requests a handshake-era server sends mid-call (server_requests.py).
            context = ClientRequestContext(session=client.session, request_id=key)
            return await client.session.dispatch_input_request(context, request)

        result = await run_input_required_driver(
            await send(None, None), dispatch=dispatch, retry=send, max_rounds=INPUT_ROUNDS
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
        if self.state == "signin" and self.error:
            return self.error  # reached, and it names the command: not "cannot be reached"
        retry_in = RECONNECT_BACKOFF
        if self._retry_at is not None:
            retry_in = max(0.0, self._retry_at - asyncio.get_running_loop().time())
        return reconnect.down_message(self.config, self.error or self.state, retry_in)

    def _not_ready_within(self, timeout: float | None) -> ServerError:
        waited = self.connect_timeout + 5 if timeout is None else timeout
        message = reconnect.not_ready_message(self.config, waited, self.connect_timeout)
        return ServerError(message, server=self.name, log_path=self.log_path_str())

    async def _own(self) -> None:
        """The owner task: enter the client, list tools, hold the connection until told to stop."""
        generation = self._generation
        sign_in = None
        try:
            sign_in = self._sign_in()
            transport = open_transport(
                self.config, log_path=self.log_path, noise=self.stdout_noise, sign_in=sign_in
            )
            async with Client(
                transport,
                mode=self.config.protocol,
                message_handler=self._on_message,
                **self.requests.client_callbacks(),
            ) as client:
                self.protocol_version = client.protocol_version
                info = client.server_info
                self.server_name = info.name if info else None
                self._tools, self.warnings = await list_tools(client, self.name)
                self._client = client
                self.state = "ready"
                self._ready.set()
                await self._stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # ExceptionGroup from the transport's task group included
            self._fail(describe_failure(exc))
            if needs_sign_in(exc):
                if self._client is not None:  # it was ready: a call's request ended it
                    self._sign_in_lost[generation] = self.error or "needs sign-in"
                self.state = "signin"
                if self._generation == 1:  # said once, at the first start (run's and serve's stderr)
                    log.warning("server %r: %s", self.name, self.error)
        finally:
            self._client = None
            self._ready.set()
            if sign_in is not None:
                await sign_in.aclose()

    def _sign_in(self) -> Any:
        """The person's side of an OAuth sign-in for this start, where the front door offers one."""
        opener = self.requests.context.sign_in
        return opener(self.config) if opener is not None and uses_oauth(self.config) else None

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

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            # Never await session I/O inside the handler: it runs on the dispatcher's read loop.
            self.schedule_refresh()

    def _fail(self, reason: str) -> None:
        self.state = "failed"
        self.error = reason
        self._ready.set()

    def _read_log_tail(self) -> tuple[str, ...]:
        """What a stdio server wrote to stderr during the start that just failed, its ``env`` values masked.

        Read once the transport has closed, which waits for the pipe to be drained into the log.
        """
        if self.log_path is None:
            return ()
        return read_log_tail(self.log_path, since=self._log_start, secrets=self.config.env.values())

    def log_path_str(self) -> str | None:
        """The stderr log's path as text, for messages (None for remote servers)."""
        return str(self.log_path) if self.log_path else None


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
