"""ToolHub: the broker that owns every MCP connection, runs every tool call and records it.

All connections live on one background event loop thread (see ``loop.py``). Servers connect
concurrently; one that fails is reported with its reason and stderr log and does not hold up the rest,
and one that is slow keeps connecting in the background while the others are used.
Each call is validated against the tool's own input schema before anything is sent, bounded by a
timeout that cancels it at the server, and appended to the CallLog. Every call a model or a program
originates waits here, in one place, for an approval when its tool needs one (``approvals.py``): each call
carries who originated it, and one that does not say is asked about too.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any

from mcp import MCPError
from mcp_types.jsonrpc import REQUEST_TIMEOUT

from ..approvals import ApprovalCheck, ApprovalPolicy, current_check
from ..calllog import CallLog, CallRecord
from ..config import ServerConfig
from ..core.errors import ServerError, ToolArgumentError, ToolError, ToolTimeoutError, UnknownToolError
from ..core.toolspec import ToolSpec
from .connection import ProgressCallback, ServerConnection, ServerState
from .loop import LoopThread, blocking
from .output_check import OutputChecks
from .server_requests import AskContext
from .startup import ServerStartup
from .stdio_reader import REFUSED_BY_TRANSPORT, take_transport_warnings
from .validation import ArgumentValidator

__all__ = ["DEFAULT_CALL_TIMEOUT", "DEFAULT_CONNECT_TIMEOUT", "DEFAULT_START_WAIT", "ServerStatus", "ToolHub"]

log = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT = 60.0
"""Seconds a tool call may take when neither the call nor the server's config says otherwise."""

DEFAULT_CONNECT_TIMEOUT = 60.0
"""Seconds a server may take to start and list its tools when its config does not say (``connectTimeout``)."""

DEFAULT_START_WAIT = 5.0
"""Seconds ``start()`` waits at least, after a server got ready, for those still connecting.

A demo server starts in about 1.5 s on an idle 2-core machine and 2-4 s under load: this leaves room for
a few of them starting side by side (``defaults.startWait`` in the config sets it)."""


@dataclass(frozen=True)
class ServerStatus:
    """What ``codemode doctor`` and ``%codemode status`` show about one server."""

    name: str
    transport: str
    state: ServerState
    tools: int
    error: str | None
    log_path: str | None
    protocol_version: str | None
    restarts: int
    warnings: tuple[str, ...]
    log_tail: tuple[str, ...] = ()
    """After a failed start of a stdio server: the last lines of its stderr then (the reason it gave), each
    printable, short, with secrets masked."""
    non_json_lines: int = 0
    """Lines the server wrote to its stdout that are not JSON-RPC (they were skipped), over every start."""
    last_non_json_line: str | None = None

    def log_tail_lines(self, indent: str = "    ") -> list[str]:
        """The end of its stderr log as shown under its problem (doctor, ``%codemode status``, sidebar).

        A heading and the lines, or nothing when there are none.
        """
        if not self.log_tail:
            return []
        return [f"{indent}its stderr log ends with:", *(f"{indent}  | {line}" for line in self.log_tail)]

    def stdout_note(self) -> str | None:
        """One line about the non-JSON-RPC lines on the server's stdout, or None when there were none."""
        if not self.non_json_lines:
            return None
        return (
            f"{self.non_json_lines} line{'s' if self.non_json_lines != 1 else ''} on its stdout "
            f"{'were' if self.non_json_lines != 1 else 'was'} not JSON-RPC and skipped (a server should "
            f"log to stderr); the last: {self.last_non_json_line!r}"
        )


class ToolHub:
    """Connections to the configured MCP servers, with a sync API over an async core.

    Use it as a context manager, or call ``start()`` and ``close()``. Every method without an ``a``
    prefix blocks; the ``a``-prefixed twins can be awaited from any event loop. Each pair is one coroutine
    (``astart``, ``acall``) and its blocking twin made by ``loop.blocking``, which runs it on the hub's loop
    thread; ``close`` and ``wait_for_servers`` are written out because they stop that thread, or must not
    need it when there is nothing to wait for.
    """

    def __init__(
        self,
        servers: Iterable[ServerConfig],
        *,
        state_dir: Path | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        start_wait: float = DEFAULT_START_WAIT,
        call_log: CallLog | None = None,
        approvals: ApprovalPolicy | None = None,
        workspace: Path | None = None,
    ) -> None:
        """Set up; nothing connects before ``start()``.

        Args:
            servers: the servers to connect to (disabled ones are listed, never connected).
            state_dir: where the stderr logs and spilled call records go (``.codemode``).
            connect_timeout: seconds a server may take to connect unless its ``connect_timeout`` says.
            start_wait: seconds ``start()`` waits at least, after a server got ready, for the others
                before returning without them (``defaults.startWait``; see ``start``).
            call_log: the call log to append to (a new one by default).
            approvals: which tools need approval (``codeMode.approve``/``autoApprove``) for a call that
                does not say who originated it (``acall``'s ``approval``); such a call has nobody to ask
                and is denied when its tool needs approval. By default only the servers' annotations.
            workspace: the root servers get for ``roots/list`` (None: the current directory).
        """
        self._configs = list(servers)
        self.state_dir = state_dir
        self.call_log = call_log if call_log is not None else CallLog(spill_dir=state_dir)
        self._connect_timeout = connect_timeout
        self.start_wait = start_wait
        self._loop: LoopThread | None = None
        self._connections: dict[str, ServerConnection] = {}
        self._startup = ServerStartup()
        self._validators: dict[tuple[str, str], ArgumentValidator] = {}
        self._output_checks = OutputChecks()
        self._listeners: list[Callable[[], None]] = []
        self.tools_version = 0
        """Grows by one whenever any server's tool list changes."""
        self.unstated = ApprovalCheck(approvals or ApprovalPolicy(), None, origin="unstated")
        """The check of a call that does not say who originated it: asked about, with nobody to ask."""
        self.asking = AskContext(self.call_log, workspace=workspace)
        """What answers a server's questions during calls (``server_requests.py``): the workspace for
        ``roots/list``, ``person`` (the front door's approver, for calls whose check has nobody to ask) and
        ``model`` (opens the configured model for sampling). Front doors set the last two."""

    # -- lifecycle --------------------------------------------------------------------------------

    async def astart(self) -> ToolHub:
        """Connect to every enabled server at once; return when each is ready or has failed.

        A server much slower than the others does not hold ``start`` up: after each server that gets
        ready, ``start`` waits for the rest as long again as that took, and at least ``start_wait``
        seconds, then returns. Only a server getting ready counts: one that fails at once says nothing
        about how long healthy ones need, so until the first is ready ``start`` waits (each server at
        most its connect timeout). Servers still connecting go on in the background; their tools appear
        when they are ready (``tools_version``, ``on_tools_changed``), and a call to one of their tools
        waits for them. ``wait_for_servers()`` waits for all of them.
        """
        await self._own_loop().run_async(self._start_all())
        return self

    start = blocking(astart, loop=lambda hub: hub._own_loop())

    @property
    def pending(self) -> list[str]:
        """The servers still connecting after ``start()``, in config order."""
        return self._startup.pending

    def wait_for_servers(self, until: Callable[[], bool] | None = None) -> None:
        """Block while servers are still connecting (each at most its connect timeout).

        ``until`` (called on the hub's thread as each server finishes) ends the wait early when it
        returns True: ``until=lambda: "get_weather" in toolbox.tools`` waits only as long as needed.
        """
        if self.pending:
            self._require_loop().run(self._startup.wait(until))

    async def await_servers(self, until: Callable[[], bool] | None = None) -> None:
        """Async twin of ``wait_for_servers``."""
        if self.pending:
            await self._require_loop().run_async(self._startup.wait(until))

    def close(self) -> None:
        """Disconnect every server and stop the loop thread."""
        if self._loop is None:
            return
        self._loop.run(self._close_all())
        self._loop.stop()
        self._loop = None

    async def aclose(self) -> None:
        """Async twin of ``close``."""
        if self._loop is None:
            return
        await self._loop.run_async(self._close_all())
        self._loop.stop()
        self._loop = None

    def __enter__(self) -> ToolHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ToolHub:
        return await self.astart()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # -- what is there ----------------------------------------------------------------------------

    def status(self) -> list[ServerStatus]:
        """One entry per configured server, in config order."""
        out = []
        for cfg in self._configs:
            conn = self._connections.get(cfg.name)
            if conn is not None:
                state: ServerState = conn.effective_state
            else:
                state = "disabled" if cfg.disabled else "connecting"
            out.append(
                ServerStatus(
                    name=cfg.name,
                    transport=cfg.transport,
                    state=state,
                    tools=len(conn.tools) if conn and state == "ready" else 0,
                    error=conn.error if conn else None,
                    log_path=str(conn.log_path) if conn and conn.log_path else None,
                    log_tail=conn.log_tail if conn else (),
                    protocol_version=conn.protocol_version if conn else None,
                    restarts=conn.restarts if conn else 0,
                    warnings=tuple(conn.warnings) if conn else (),
                    non_json_lines=conn.stdout_noise.lines if conn else 0,
                    last_non_json_line=conn.stdout_noise.last if conn else None,
                )
            )
        return out

    def tool_specs(self) -> list[ToolSpec]:
        """Every tool of every ready server, servers in config order."""
        return [
            spec
            for cfg in self._configs
            if (conn := self._connections.get(cfg.name)) is not None and conn.state == "ready"
            for spec in conn.tools
        ]

    @property
    def loop_thread(self) -> LoopThread:
        """The event loop thread that owns the connections (for code that must run beside them)."""
        return self._require_loop()

    def on_tools_changed(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` (on the hub's thread) whenever a server's tool list changes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    # -- calls ------------------------------------------------------------------------------------

    async def acall(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        execution_id: str | None = None,
        seq: int | None = None,
        approval: ApprovalCheck | None = None,
    ) -> dict[str, Any]:
        """Call a tool and return its CallToolResult in wire (camelCase JSON) form.

        A result with ``isError`` is returned, not raised (``results.decode_result`` raises it).
        An interrupt (KeyboardInterrupt) while waiting cancels the call at the server.

        ``execution_id`` and ``seq`` place the call in a program's record (its execution, its number there).
        ``approval``: who originated the call, the policy and whom to ask (``approvals.ApprovalCheck``).
        Without it, the check ``approvals.acting_for`` set for this context, else ``unstated``: a call
        that does not say whose it is is asked about like a model's. A call of a tool that needs approval
        waits for a decision (unless it is the person's own, ``approvals.PERSONS_OWN_CALL``) within the
        call's timeout, after its arguments are checked; the decision is in its record.

        Raises:
            UnknownToolError: no such server or tool.
            ToolArgumentError: the arguments do not fit the tool's input schema; nothing was sent.
            ToolTimeoutError: no answer within the timeout; the call was cancelled at the server.
            ServerError: the server is not connected or the connection failed.
            ToolError: the call needed approval and was denied; nothing was sent.
        """
        loop = self._require_loop()
        # Read here, in the caller's context, before the call moves to the hub's loop.
        check = approval if approval is not None else (current_check() or self.unstated)
        return await loop.run_async(
            self._call(server, tool, arguments or {}, timeout, progress, execution_id, seq, check)
        )

    call = blocking(acall, loop=lambda hub: hub._require_loop())

    def refresh(self) -> None:
        """List every ready server's tools again."""
        self._require_loop().run(self._refresh_all())

    def reconnect(self, server: str) -> ServerStatus:
        """Connect one server again now (a stdio server is restarted); returns its status afterwards.

        A server still connecting is waited for first (at most its connect timeout). Its tools are listed
        again when it is ready (``on_tools_changed``).

        Raises:
            UnknownToolError: no server of that name.
            ServerError: it is disabled in the config, or the hub is closing.
        """
        self._require_loop().run(self.areconnect(server))
        return next(status for status in self.status() if status.name == server)

    async def areconnect(self, server: str) -> None:
        """``reconnect`` on the hub's loop (a sign-in that just ended connects its server again)."""
        conn = self._connection(server)
        if conn.config.disabled:
            raise ServerError('disabled in the config ("disabled": true)', server=server)
        await self._reconnect(conn)

    # -- internals --------------------------------------------------------------------------------

    def _own_loop(self) -> LoopThread:
        """The loop thread, started on first use (by ``start``)."""
        if self._loop is None:
            self._loop = LoopThread()
        return self._loop

    def _require_loop(self) -> LoopThread:
        if self._loop is None:
            raise ServerError("the hub is not started; use it in a with block or call start()", server="*")
        return self._loop

    async def _start_all(self) -> None:
        log_dir = (self.state_dir or Path.cwd() / ".codemode") / "logs"
        for cfg in self._configs:
            if cfg.name not in self._connections:
                self._connections[cfg.name] = ServerConnection(
                    cfg,
                    log_dir=log_dir,
                    connect_timeout=self._connect_timeout,
                    on_tools_changed=self._tools_changed,
                    asking=self.asking,
                )
        await self._startup.start(self._connections, start_wait=self.start_wait)
        self.tools_version += 1

    async def _close_all(self) -> None:
        await self._startup.stop()
        await asyncio.gather(*(conn.close() for conn in self._connections.values()), return_exceptions=True)

    async def _refresh_all(self) -> None:
        ready = [c for c in self._connections.values() if c.state == "ready"]
        await asyncio.gather(*(c.refresh_tools() for c in ready))

    async def _reconnect(self, conn: ServerConnection) -> None:
        if conn.state == "connecting":
            await conn.wait_settled()
        await conn.reconnect()

    def _tools_changed(self, conn: ServerConnection) -> None:
        self._validators = {key: v for key, v in self._validators.items() if key[0] != conn.name}
        self._output_checks.forget(conn.name)
        self.tools_version += 1
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:  # one broken listener must neither stop the others nor the connection
                log.exception("a tools-changed listener failed after server %r changed its tools", conn.name)

    def _connection(self, server: str) -> ServerConnection:
        conn = self._connections.get(server)
        if conn is None:
            close = difflib.get_close_matches(server, list(self._connections), n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise UnknownToolError(
                f"no server named {server!r}{hint} (servers: {', '.join(self._connections)})"
            )
        return conn

    async def _find(self, conn: ServerConnection, tool: str, timeout: float) -> ToolSpec:
        server = conn.name
        if conn.state != "ready" or conn.tool(tool) is None:
            # Still connecting: wait for it (its tools are not known yet). A remote server that went
            # away: reach it again. Anything else not ready: say why (ServerError).
            await conn.ensure_connected(timeout)
        spec = conn.tool(tool)
        if spec is not None:
            return spec
        names = [s.name for s in conn.tools]
        close = difflib.get_close_matches(tool, names, n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise UnknownToolError(f"server {server!r} has no tool {tool!r}{hint}")

    def _validator(self, spec: ToolSpec) -> ArgumentValidator:
        key = (spec.server, spec.name)
        validator = self._validators.get(key)
        if validator is None:
            validator = self._validators[key] = ArgumentValidator(spec)
        return validator

    async def _call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        timeout: float | None,
        progress: ProgressCallback | None,
        execution_id: str | None,
        seq: int | None,
        approval: ApprovalCheck,
    ) -> dict[str, Any]:
        conn = self._connection(server)
        limit = timeout if timeout is not None else (conn.config.timeout or DEFAULT_CALL_TIMEOUT)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit  # one limit for the whole call, waiting for a connection included
        spec = await self._find(conn, tool, limit)
        record = self.call_log.start(server, tool, arguments, execution_id=execution_id, seq=seq)
        try:
            self._validator(spec).validate(arguments)
        except ToolArgumentError as exc:
            self.call_log.finish(record, "invalid_arguments", error=str(exc))
            raise
        if (reason := approval.reason(spec)) is not None:
            request = approval.request(spec, arguments, reason)
            if execution_id is not None:
                request = replace(request, execution_id=execution_id)
            try:
                decision = await approval.decide(request, max(0.0, deadline - loop.time()))
            except asyncio.CancelledError:
                self.call_log.finish(record, "cancelled", error="cancelled while waiting for approval")
                raise
            record = replace(record, approval=decision.to_json(reason, approval.origin))
            if not decision.allowed:
                message = decision.denial(request, limit)
                self.call_log.finish(record, "denied", error=message)
                raise ToolError(message, tool=tool, server=server)
        try:
            # The SDK's own request timeout: when it expires, the server is sent notifications/cancelled.
            left = max(0.0, deadline - loop.time())
            with conn.requests.during(record.id, tool, approval):
                result = await conn.call(
                    tool, arguments, timeout=left, progress=self._recorder(record, progress)
                )
        except asyncio.CancelledError:
            self.call_log.finish(record, "cancelled", error="cancelled by the caller")
            raise
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                message = f"{server}/{tool} did not answer within {limit:g} s; it was cancelled at the server"
                self.call_log.finish(record, "timeout", error=message)
                raise ToolTimeoutError(message, tool=tool, timeout=limit) from None
            if exc.data == REFUSED_BY_TRANSPORT:  # not the server's error: our stdio reader refused it
                self._fail(record, exc.message)
                raise ServerError(f"{tool}: {exc.message}", server=server) from None
            self._fail(record, f"{exc.message} (MCP error {exc.code})")
            raise ServerError(f"{tool}: {exc.message} (MCP error {exc.code})", server=server) from exc
        except ServerError as exc:
            self._fail(record, str(exc))
            raise
        except Exception as exc:
            self._fail(record, f"{type(exc).__name__}: {exc}")
            raise ServerError(f"{tool}: {type(exc).__name__}: {exc}", server=server) from exc
        # The SDK runs each progress callback as a task of its own: the last ones may still be queued
        # when the result arrives. One turn of the loop records them before the call is finished.
        await asyncio.sleep(0)
        warnings = take_transport_warnings(result) + self._output_checks.warnings(spec, result)
        self.call_log.finish(
            record, "tool_error" if result.get("isError") else "ok", result=result, warnings=warnings
        )
        return result

    def _recorder(self, record: CallRecord, forward: ProgressCallback | None) -> ProgressCallback:
        """The call's progress callback: each notification goes into its record, then to the caller's."""

        def on_progress(progress: float, total: float | None, message: str | None) -> Any:
            self.call_log.progress(record, progress, total, message)
            return forward(progress, total, message) if forward is not None else None

        return on_progress

    def _fail(self, record: CallRecord, message: str) -> None:
        self.call_log.finish(record, "server_error", error=message)
