"""Build and run the MCP server: the Toolbox connects the servers, the Executor runs each program.

The server is the MCP SDK's ``MCPServer``; its ``execute_python`` description is the one ``%%agent``
offers (``agent.build_toolset``), so a host's model reads the same rules and typed stubs as ours.
"""

# No ``from __future__ import annotations``: the SDK reads execute_python's annotations, which name
# a local (its timeout text), so they must be evaluated where the function is defined.

import asyncio
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
from ..agent.prompt import CODE_PARAMETER, EXECUTE_PYTHON, TIMEOUT_PARAMETER
from ..config import CodeModeSettings, ServeSettings, load_config, resolve_code_mode
from ..config.executor_choice import ExecutorChoice, chosen_executor, require_ray
from ..core.errors import ServerBusyError, SessionLimitError, ToolNameCollisionError
from ..core.limits import MAX_TIMEOUT, MIN_TIMEOUT, TimeoutValueError, check_timeout
from ..executor import ExecutionResult, Executor
from ..toolbox import Toolbox
from .approval import Allowances, ClientApprover
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
from .reply import Finished, finish, reply
from .resources import add_artifact_resources
from .rounds import AskByRound, Rounds
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

TIMEOUT_SCHEMA = WithJsonSchema(
    {"anyOf": [{"type": "number", "minimum": MIN_TIMEOUT, "maximum": MAX_TIMEOUT}, {"type": "null"}]}
)
"""What clients are told of ``timeout``; the value itself is checked by ``limits.check_timeout``, so a bad
one gets the message every front door gives instead of a validation library's report and link."""

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

    timeout_text = TIMEOUT_PARAMETER.format(timeout=settings.timeout)
    session_text = SESSION_PARAMETER.format(idle=f"{limits.session_idle:g}")
    admission = Admission(limits.pool_size, limits.queue_limit)
    sessions = SessionTable(limits.max_sessions, lambda: executor.sessions)
    allowances = Allowances()
    rounds = Rounds()
    log_levels = LogLevels(stdio=transport == "stdio")

    def client_approver(ctx: Context[Any, Any], by_round: AskByRound | None) -> ClientApprover:
        """Whom an excluded tool's direct call asks: its request's client, with its session's allowances."""
        allowed = allowances.of(client_scope(ctx, stdio=transport == "stdio"))
        return ClientApprover(ctx, asyncio.get_running_loop(), allowed, by_round)

    async def execute_python(
        code: Annotated[str, Field(description=CODE_PARAMETER)],
        ctx: Context[Any, Any],
        timeout: Annotated[Any, TIMEOUT_SCHEMA, Field(description=timeout_text)] = None,
        session: Annotated[str | None, Field(min_length=1, max_length=100, description=session_text)] = None,
        tools: Annotated[list[dict[str, Any]] | None, Field(description=TOOLS_PARAMETER)] = None,
        resume: Annotated[dict[str, Any] | None, Field(description=RESUME_PARAMETER)] = None,
        answers: Annotated[list[dict[str, Any]] | None, Field(description=ANSWERS_PARAMETER)] = None,
    ) -> Annotated[CallToolResult, OUTPUT_RECORD] | InputRequiredResult:
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if modern and ctx.request_state is not None:  # a retry answering the run's approval question
            return await rounds.retry(ctx)
        try:
            timeout = None if timeout is None else check_timeout(timeout)
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
        relay = ProgressRelay(ctx, asyncio.get_running_loop(), functools.partial(log_levels.wants, scope))
        answer = functools.partial(reply, budget=options.result_budget, ref=ref, run=run)

        async def execute(by_round: AskByRound | None = None) -> Finished:
            try:
                async with admission.place():
                    result = await _run(executor, ctx, code, timeout, ref, run, allowed, relay, by_round)
            except ServerBusyError as exc:
                raise ToolError(str(exc)) from None
            except ToolNameCollisionError as exc:
                raise ToolError(f"tools: {exc}") from None
            finished = await finish(result, executor.artifacts, options.result_budget, ref=ref, run=run)
            if result.artifacts or finished.whole:  # new resources: clients listing them are told
                await refresher.resources_changed()
            return finished

        if not modern:
            return answer(await execute())
        # 2026-07-28: an approval the program waits on ends this call with the question (rounds.py).
        waiting = rounds.open(answer, relay)
        rounds.start(waiting, execute(waiting.ask))
        return await rounds.reply(waiting)

    def replace(description: str) -> None:
        server.remove_tool(EXECUTE_PYTHON)
        server.add_tool(execute_python, name=EXECUTE_PYTHON, description=description)

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
    ctx: Context[Any, Any],
    code: str,
    timeout: float | None,
    ref: SessionRef | None,
    client: ClientRun | None,
    allowed: set[str],
    relay: ProgressRelay,
    by_round: AskByRound | None = None,
) -> ExecutionResult:
    """Run one program, relaying its calls, progress and output to the client as it goes.

    ``client``: the client's tools and the record of earlier rounds (``client_tools.py``). Calls that need
    approval are asked of the client (``approval.py``; a 2026-07-28 client through ``by_round``,
    ``rounds.py``); ``allowed``: the tools its session allowed; ``relay`` sends what happens.
    """
    loop = asyncio.get_running_loop()
    relay.start()
    running = asyncio.ensure_future(
        executor.arun(
            code,
            timeout=client.timeout if client is not None else timeout,
            session=ref.key if ref is not None else None,
            tools=client.tools if client is not None else (),
            replay=client.record if client is not None else None,
            approver=ClientApprover(ctx, loop, allowed, by_round),
            on_output=relay.on_output,
            on_call=relay.on_call,
            on_progress=relay.on_progress,
        )
    )
    watch = asyncio.ensure_future(_cancel_when_gone(ctx, running))
    try:
        result = await running
    except BaseException:
        running.cancel()  # cancelled by the client: the executor stops the program and its calls
        relay.cancel()
        raise
    finally:
        watch.cancel()
    await relay.finish()
    return result


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
