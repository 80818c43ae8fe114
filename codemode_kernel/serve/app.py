"""Build and run the MCP server: the Toolbox connects the servers, the Executor runs each program.

The server is the MCP SDK's ``MCPServer``; its ``execute_python`` description is the one ``%%agent``
offers (``agent.build_toolset``), so a host's model reads the same rules and typed stubs as ours.
"""

# No ``from __future__ import annotations``: the SDK reads execute_python's annotations, which name
# a local (its timeout text), so they must be evaluated where the function is defined.

import asyncio
import contextlib
import functools
import sys
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.types import CallToolResult, InputRequiredResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field, WithJsonSchema
from starlette.requests import Request

from .._version import __version__
from ..agent import AgentOptions, build_toolset
from ..agent.prompt import CODE_PARAMETER, EXECUTE_PYTHON, timeout_parameter
from ..agent.running import (
    CANCEL_EXECUTION,
    CANCEL_EXECUTION_DESCRIPTION,
    EXECUTION_ID_PARAMETER,
    LIST_EXECUTIONS,
    LIST_EXECUTIONS_DESCRIPTION,
    WAIT_EXECUTION,
    WAIT_EXECUTION_DESCRIPTION,
    WAIT_PARAMETER,
)
from ..config import CodeModeSettings, ServeSettings, load_config, resolve_code_mode
from ..config.executor_choice import ExecutorChoice, chosen_executor, require_ray
from ..core.errors import ServerBusyError, SessionLimitError, ToolNameCollisionError
from ..core.limits import MAX_WAIT, MIN_TIMEOUT, TimeoutValueError, check_timeout
from ..executor import ExecutionResult, Executor
from ..toolbox import Toolbox
from .approval import Allowances, ClientApprover
from .background import NEVER_STARTED, BackgroundRun, BackgroundRuns
from .client_tools import (
    ANSWERS_PARAMETER,
    RESUME_PARAMETER,
    TOOLS_PARAMETER,
    ClientRun,
    ClientToolsError,
    client_run,
)
from .http import HttpAccess, run_http
from .limits import Admission
from .llm import model_answerer
from .loglevel import LogLevels
from .passthrough import passthrough_tools
from .progress import ProgressRelay
from .record import OUTPUT_RECORD
from .refresh import ToolListRefresher
from .reply import Finished, finish, reply, running_reply
from .resources import add_artifact_resources
from .rounds import GONE, GRACE_S, AskByRound, Rounds, WaitingRun
from .selfref import self_reference_note, without_self
from .sessions import SessionRef, SessionTable, client_scope

__all__ = ["Transport", "build_server", "serve"]

Transport = Literal["stdio", "http"]

DISCONNECT_POLL_S = 0.5
"""How often a running program's HTTP client is checked for having gone away."""

SESSION_PARAMETER = (
    "Optional. A name for a session: programs run with the same name keep their globals (variables, "
    "imports, functions) from one call to the next. Omit it for a fresh process each call. A session ends "
    "after {idle} s unused, or when its program is stopped; the result's `session` says which one ran, and "
    "over HTTP without MCP sessions it is the name to pass next time."
)


def _timeout_schema(maximum: float) -> WithJsonSchema:
    """What clients are told of ``timeout``, up to ``maximum`` (``codeMode.maxTimeout``).

    The value itself is checked by ``limits.check_timeout``, so a bad one gets the message every front door
    gives instead of a validation library's report and link.
    """
    return WithJsonSchema(
        {"anyOf": [{"type": "number", "minimum": MIN_TIMEOUT, "maximum": maximum}, {"type": "null"}]}
    )


WAIT_SCHEMA = WithJsonSchema(
    {"anyOf": [{"type": "number", "minimum": 0, "maximum": MAX_WAIT}, {"type": "null"}]}
)
"""What clients are told of ``wait_s``; checked by ``_check_wait`` with a message naming the range."""


def _check_wait(value: object, default: float) -> float:
    """``wait_s`` as seconds (``default`` when not given), or a ToolError naming the range and the fix."""
    if value is None:
        return default
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_WAIT:
        raise ToolError(
            f"wait_s: {value!r} is not a number of seconds from 0 to {MAX_WAIT:g}; pass one, or leave wait_s "
            "out for the default (a longer program is waited for again with wait_execution)"
        )
    return float(value)


_ENDS_PROGRAMS = "codemode.serve: ends its programs"
"""Marks a connection whose end stops its background programs (``connection.state``)."""

SESSION_REFUSED = (
    "session: not with tools or resume: a program using your tools is run again from the top in each "
    "follow-up call, which a session's globals would not survive; leave out session (a program can keep "
    "data for later calls with store_artifact)"
)


def build_server(
    toolbox: Toolbox,
    executor: Executor,
    settings: CodeModeSettings,
    *,
    transport: Transport = "stdio",
    limits: ServeSettings | None = None,
) -> MCPServer[Any]:
    """The MCP server offering ``execute_python`` over ``toolbox``'s tools, run by ``executor``.

    ``transport`` decides what scopes a session: the one stdio client, or the HTTP client's MCP session.
    """
    limits = limits if limits is not None else ServeSettings()
    options = AgentOptions()  # the description promises its result_budget; reply.py keeps the promise

    def describe() -> str:
        specs = toolbox.hub.tool_specs()
        toolset = build_toolset(
            toolbox.models_for(settings), specs, settings, options, llm=executor.llm is not None
        )
        assert toolset.execute_python is not None  # settings.enabled is forced on by serve()
        return toolset.execute_python.description

    timeout_text = timeout_parameter(settings.timeout, settings.max_timeout)
    timeout_schema = _timeout_schema(settings.max_timeout)
    wait_text = WAIT_PARAMETER.format(max=MAX_WAIT, default=limits.wait)
    session_text = SESSION_PARAMETER.format(idle=f"{limits.session_idle:g}")
    admission = Admission(limits.pool_size, limits.queue_limit)
    sessions = SessionTable(limits.max_sessions, lambda: executor.sessions)
    allowances = Allowances()
    rounds = Rounds()
    runs = BackgroundRuns()
    log_levels = LogLevels(stdio=transport == "stdio")

    def client_approver(ctx: Context[Any, Any], by_round: AskByRound | None) -> ClientApprover:
        """Whom an excluded tool's direct call asks: its request's client, with its session's allowances."""
        allowed = allowances.of(client_scope(ctx, stdio=transport == "stdio"))
        return ClientApprover(ctx, asyncio.get_running_loop(), allowed, by_round)

    async def execute_python(
        code: Annotated[str, Field(description=CODE_PARAMETER)],
        ctx: Context[Any, Any],
        timeout: Annotated[Any, timeout_schema, Field(description=timeout_text)] = None,
        session: Annotated[str | None, Field(min_length=1, max_length=100, description=session_text)] = None,
        tools: Annotated[list[dict[str, Any]] | None, Field(description=TOOLS_PARAMETER)] = None,
        resume: Annotated[dict[str, Any] | None, Field(description=RESUME_PARAMETER)] = None,
        answers: Annotated[list[dict[str, Any]] | None, Field(description=ANSWERS_PARAMETER)] = None,
        wait_s: Annotated[Any, WAIT_SCHEMA, Field(description=wait_text)] = None,
    ) -> Annotated[CallToolResult, OUTPUT_RECORD] | InputRequiredResult:
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        wait = _check_wait(wait_s, limits.wait)
        if modern and ctx.request_state is not None:  # a retry answering the run's approval question
            return await _retry(ctx, wait)
        try:
            timeout = None if timeout is None else check_timeout(timeout, maximum=settings.max_timeout)
        except TimeoutValueError as exc:
            raise ToolError(str(exc)) from None
        try:
            run = client_run(code, tools, resume, answers, timeout)
        except ClientToolsError as exc:
            raise ToolError(str(exc)) from None
        if run is not None and session is not None:
            raise ToolError(SESSION_REFUSED)
        scope = client_scope(ctx, stdio=transport == "stdio")
        try:
            ref = sessions.resolve(scope, session) if session is not None else None
        except SessionLimitError as exc:
            raise ToolError(str(exc)) from None
        allowed = allowances.of(scope)
        loop = asyncio.get_running_loop()
        approver = ClientApprover(ctx, loop, allowed)
        _end_with_session(ctx, scope)
        background = BackgroundRun(scope=scope, code=code, ref=ref, client_run=run, approver=approver)
        answer = functools.partial(reply, budget=options.result_budget, ref=ref, run=run)

        async def execute() -> Finished:
            try:
                async with admission.place():
                    result = await _run(executor, background, code, timeout, ref, run)
            except ServerBusyError as exc:
                raise ToolError(str(exc)) from None
            except ToolNameCollisionError as exc:
                raise ToolError(f"tools: {exc}") from None
            finished = await finish(result, executor.artifacts, options.result_budget, ref=ref, run=run)
            if result.artifacts or finished.whole:  # new resources: clients listing them are told
                await refresher.resources_changed()
            return finished

        if not modern:
            background.task = asyncio.ensure_future(execute())
            watch = asyncio.ensure_future(_cancel_when_gone(ctx, background.answer_task))
            try:
                return await _wait_for(background, ctx, wait, first=True)
            finally:
                watch.cancel()
        # 2026-07-28: an approval the program waits on ends this call with the question (rounds.py).
        waiting = rounds.open(answer)
        waiting.background = background
        waiting.stopped = lambda: NEVER_STARTED.format(handle=background.handle)  # cancelled while queued
        background.waiting = waiting
        approver.rebind(ctx, waiting.ask)
        rounds.start(waiting, execute())
        background.task = waiting.task
        return await _wait_for(background, ctx, wait, first=True)

    async def _wait_for(
        background: BackgroundRun, ctx: Context[Any, Any], wait: float, *, first: bool
    ) -> CallToolResult | InputRequiredResult:
        """Wait up to ``wait`` seconds for the run (its end, a note, a question); answer with what came.

        The first call (``first``) stops the run when its client cancels it; a later wait only gives up.
        """
        loop = asyncio.get_running_loop()
        began = loop.time()
        # One call at a time gets the updates and their notifications: a second call waits its turn (its
        # wait_s counting from its start), then is told only of what it returns.
        async with background.lock:
            relay = ProgressRelay(ctx, loop, functools.partial(log_levels.wants, scope_of(ctx)))
            background.relay = relay
            background.calling.set()
            relay.start()
            try:
                answer = await _answer(background, max(0.0, wait - (loop.time() - began)), first=first)
            except BaseException:
                relay.cancel()  # a failed or cancelled call sends nothing more
                raise
            finally:
                background.relay = None
                background.calling.clear()
        await relay.finish()
        return answer

    async def _answer(
        background: BackgroundRun, wait: float, *, first: bool
    ) -> CallToolResult | InputRequiredResult:
        """The run's final answer, its next question, or, once ``wait`` is over, what it did since."""
        waiting: WaitingRun[Finished] | None = background.waiting
        if waiting is not None:
            until = asyncio.ensure_future(background.wait(wait))
            try:
                outcome = await rounds.reply(waiting, until=until, stop_on_cancel=first)
            finally:
                until.cancel()
            if outcome is not None:
                if isinstance(outcome, CallToolResult):
                    runs.collected(background)
                return outcome
        else:
            try:
                ended = await background.wait(wait)
            except asyncio.CancelledError:
                if first:
                    background.answer_task.cancel()  # cancelled by the client: the program stops
                raise
            if ended:
                runs.collected(background)
                return reply(
                    background.finished(),
                    options.result_budget,
                    ref=background.ref,
                    run=background.client_run,
                )
        if not background.handle:
            runs.keep(background)
        update = background.take_update(options.result_budget // 2)
        return running_reply(
            background.handle, background.job, update, options.result_budget, ref=background.ref
        )

    async def _retry(ctx: Context[Any, Any], wait: float) -> CallToolResult | InputRequiredResult:
        """A 2026-07-28 retry answering a question of a run: hand over the answer, then wait as before."""
        assert ctx.request_state is not None
        waiting, unanswered = rounds.resume(ctx.request_state, ctx.input_responses)
        background = waiting.background
        if not isinstance(background, BackgroundRun):  # a passthrough tool's state sent to execute_python
            raise ToolError(GONE.format(grace=GRACE_S))
        background.approver.rebind(ctx, waiting.ask)
        if unanswered is not None:
            answer = await rounds.reply(waiting, unanswered)
            assert answer is not None
            return answer
        # Not yet answered running, the client has no id for the run: this retry is still its first call,
        # and cancelling it stops the program (else it would run on unreachable, holding its place).
        return await _wait_for(background, ctx, wait, first=not background.handle)

    async def wait_execution(
        execution_id: Annotated[str, Field(min_length=1, max_length=200, description=EXECUTION_ID_PARAMETER)],
        ctx: Context[Any, Any],
        wait_s: Annotated[Any, WAIT_SCHEMA, Field(description=wait_text)] = None,
    ) -> Annotated[CallToolResult, OUTPUT_RECORD] | InputRequiredResult:
        wait = _check_wait(wait_s, limits.wait)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and ctx.request_state is not None:
            return await _retry(ctx, wait)
        background = runs.find(client_scope(ctx, stdio=transport == "stdio"), execution_id)
        if background.waiting is not None:
            background.approver.rebind(ctx, background.waiting.ask)
        else:
            background.approver.rebind(ctx, None)
        return await _wait_for(background, ctx, wait, first=False)

    async def cancel_execution(
        execution_id: Annotated[str, Field(min_length=1, max_length=200, description=EXECUTION_ID_PARAMETER)],
        ctx: Context[Any, Any],
    ) -> Annotated[CallToolResult, OUTPUT_RECORD]:
        background = runs.find(client_scope(ctx, stdio=transport == "stdio"), execution_id)
        if background.job is not None:
            background.job.cancel("the client (cancel_execution)")
        else:
            background.answer_task.cancel()
        try:
            await asyncio.wait({background.answer_task}, timeout=executor.grace + 10.0)
        finally:
            pass
        if not background.ended:
            raise ToolError(f"execution_id: {execution_id!r} did not stop within {executor.grace + 10:g} s")
        runs.collected(background)
        return reply(
            background.finished(),
            options.result_budget,
            ref=background.ref,
            run=background.client_run,
        )

    async def list_executions(ctx: Context[Any, Any]) -> str:
        scope = client_scope(ctx, stdio=transport == "stdio")
        if scope is None:
            return (
                "This request has no MCP session (the 2026-07-28 protocol over HTTP), so no execution can be "
                "listed for it: keep the execution_id each answer gave."
            )
        mine = runs.of(scope)
        if not mine:
            return "No execution of yours is running or waiting to be collected."
        lines = [f"{r.handle}  {r.status:<9} {r.elapsed():7.1f} s  {r.first_line()}" for r in mine]
        return "execution_id  status  seconds  program\n" + "\n".join(lines)

    def _end_with_session(ctx: Context[Any, Any], scope: str | None) -> None:
        """Stop a handshake-era MCP session's programs when it ends (DELETE, idle): none can reach them.

        Its connection's ``exit_stack`` is the SDK's per-connection teardown, unwound as it closes.
        """
        if scope is None or transport == "stdio":  # stdio: serve ends with its client
            return
        connection = getattr(ctx.request_context.session, "_connection", None)
        if connection is None or connection.state.get(_ENDS_PROGRAMS):
            return
        connection.state[_ENDS_PROGRAMS] = True
        connection.exit_stack.callback(runs.cancel_of, scope, "the client's MCP session ending")

    def scope_of(ctx: Context[Any, Any]) -> str | None:
        return client_scope(ctx, stdio=transport == "stdio")

    def replace(description: str) -> None:
        server.remove_tool(EXECUTE_PYTHON)
        server.add_tool(execute_python, name=EXECUTE_PYTHON, description=description)

    follow_ups = [
        Tool.from_function(wait_execution, name=WAIT_EXECUTION, description=WAIT_EXECUTION_DESCRIPTION),
        Tool.from_function(cancel_execution, name=CANCEL_EXECUTION, description=CANCEL_EXECUTION_DESCRIPTION),
        Tool.from_function(list_executions, name=LIST_EXECUTIONS, description=LIST_EXECUTIONS_DESCRIPTION),
    ]

    bus = InMemorySubscriptionBus()
    refresher = ToolListRefresher(describe, replace, bus)
    server: MCPServer[Any] = MCPServer(
        "codemode",
        title="Code Mode",
        version=__version__,
        instructions="Run Python programs that call the configured MCP servers' tools as typed functions.",
        log_level="WARNING",
        # execute_python first, then the excluded tools under their own names and schemas.
        tools=[
            Tool.from_function(execute_python, name=EXECUTE_PYTHON, description=refresher.description),
            *follow_ups,
            *passthrough_tools(toolbox, settings, approver=client_approver, rounds=rounds),
        ],
        subscriptions=bus,
    )
    server.middleware.append(refresher.middleware)
    toolbox.hub.on_tools_changed(refresher.on_tools_changed)
    add_artifact_resources(server, executor.artifacts)
    log_levels.install(server)
    return server


async def _run(
    executor: Executor,
    background: BackgroundRun,
    code: str,
    timeout: float | None,
    ref: SessionRef | None,
    client: ClientRun | None,
) -> ExecutionResult:
    """Run one program in the background and await its result; ``background`` tells whoever waits.

    ``client``: the client's tools and the record of earlier rounds (``client_tools.py``). Calls that need
    approval are asked of the client by ``background.approver`` (``approval.py``), bound to the call that
    waits now. Cancelled (the first call cancelled by its client, serve stopping): the program is stopped
    as at its deadline, and its result made before the cancel goes on.
    """
    job = executor.start(
        code,
        timeout=client.timeout if client is not None else timeout,
        session=ref.key if ref is not None else None,
        tools=client.tools if client is not None else (),
        replay=client.record if client is not None else None,
        approver=background.asker(asyncio.get_running_loop()),
        on_output=background.on_output,
        on_call=background.on_call,
        on_progress=background.on_progress,
        on_note=background.on_note,
        execution_id=background.execution_id,
    )
    background.job = job
    try:
        return await asyncio.shield(asyncio.wrap_future(job.future))
    except asyncio.CancelledError:
        job.cancel("the client (it cancelled the call)")
        with contextlib.suppress(BaseException):
            await asyncio.shield(asyncio.wrap_future(job.future))
        raise


async def _cancel_when_gone(ctx: Context[Any, Any], running: asyncio.Future[Any]) -> None:
    """Cancel ``running`` when its HTTP client disconnects without saying so.

    A handshake-era client that is killed mid-call sends no notifications/cancelled, and the SDK keeps the
    handler running (a client could resume the stream); nobody can receive this result then, so the
    program is stopped instead of holding a place until its timeout.
    """
    request = ctx.request_context.request
    if not isinstance(request, Request) or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return  # stdio ends with its client; the 2026-07-28 protocol cancels on a closed stream
    while not running.done():
        if await request.is_disconnected():
            running.cancel()
            return
        await asyncio.sleep(DISCONNECT_POLL_S)


def serve(
    config_path: str | None = None,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    access: HttpAccess | None = None,
    executor_choice: ExecutorChoice | None = None,
) -> None:
    """Connect the configured servers, then serve until the client goes away (stdio) or an interrupt.

    ``access`` holds HTTP's token and allowed hosts and origins (``serve.http.http_access``);
    ``executor_choice`` is ``--executor``, over the config's (where programs run).

    Raises:
        ConfigError: the config cannot be used.
        RayNotInstalledError: programs are to run on Ray, which is not installed.
        ValueError: ``host`` is not loopback and ``access`` has no token.
    """
    config, itself = without_self(load_config(config_path))
    executor_settings = chosen_executor(config, executor_choice)
    require_ray(executor_settings)
    if itself:
        print(self_reference_note(itself, config.source), file=sys.stderr)
    # Serving code mode is the point of this command, so it is on even if the config leaves it off.
    settings = resolve_code_mode(config, None).model_copy(update={"enabled": True})
    limits = config.defaults.serve
    with (
        Toolbox(config) as toolbox,
        Executor(
            toolbox,
            settings=settings,
            session_idle=limits.session_idle,
            llm=model_answerer(config),
            executor=executor_settings,
        ) as executor,
    ):
        toolbox.wait_for_servers()  # the description lists every tool: wait for slow servers first
        server = build_server(toolbox, executor, settings, transport=transport, limits=limits)
        if transport == "stdio":
            server.run("stdio")
        else:
            run_http(server, host=host, port=port, access=access)
