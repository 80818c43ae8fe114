"""The tools excluded from code mode (``excludedTools``), offered as ordinary MCP tools (the Go rule).

An excluded tool is not a function in programs, so a host could not reach it at all unless ``serve`` offers
it beside ``execute_python``: under its own name, with the upstream's input schema, output schema, title,
description and annotations, called through the hub (argument validation, timeout, call log) and answered
with the upstream's result as it came (content, structuredContent, isError). The upstream's progress
reaches the client when it asked for progress. Such a call is the client's model's own call: one of a tool
that needs approval is asked about like a program's (``approvals.py``), of the client that made it
(``approver``; on the 2026-07-28 protocol in rounds, ``rounds.py``), and denied with the fix when nobody can
be asked.

Names are the ones ``%%agent`` gives its model (``agent.build_toolset``), so ``execute_python``'s
description names exactly the tools offered. A name already taken (by ``execute_python``, or by an excluded
tool of a server listed earlier in the config) becomes ``<server>__<tool>``, then gets ``_2``, ``_3``...;
characters other than letters, digits, ``_`` and ``-`` become ``_``. Every renamed tool is reported on
stderr: one tool never silently hides another.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError as MCPToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict, ValidationError

from ..agent import AgentOptions, build_toolset
from ..agent.prompt import EXECUTE_PYTHON
from ..approvals import ApprovalCheck, ApprovalPolicy, Approver
from ..config import CodeModeSettings
from ..core.errors import CodeModeError
from ..core.toolspec import ToolSpec
from ..hub import ToolHub
from ..toolbox import Toolbox
from .rounds import AskByRound, Rounds

__all__ = ["ClientApprovers", "passthrough_tools"]

log = logging.getLogger(__name__)

ClientApprovers = Callable[[Context[Any, Any], AskByRound | None], Approver | None]
"""The approver of one request's client (``serve.approval.ClientApprover``), made on the server's loop;
asking a 2026-07-28 client in rounds when given how (``AskByRound``)."""


def passthrough_tools(
    toolbox: Toolbox,
    settings: CodeModeSettings,
    *,
    stderr: TextIO | None = None,
    approver: ClientApprovers | None = None,
    rounds: Rounds | None = None,
) -> list[Tool]:
    """The excluded tools as SDK tools (what ``MCPServer(tools=...)`` takes), renamed ones reported.

    The names come from the same rule as ``execute_python``'s description (``build_toolset``), and
    never equal ``execute_python``. ``approver`` gives whom to ask about a call that needs approval (the
    settings' ``approve``/``autoApprove`` and the servers' annotations say which); without it nobody
    can be asked and such a call is denied. With ``rounds``, a 2026-07-28 client is asked in rounds.
    """
    offered = build_toolset(
        toolbox.models_for(settings), toolbox.hub.tool_specs(), settings, AgentOptions()
    ).classic
    for note in _renaming_notes(offered):
        print(f"codemode serve: {note}", file=stderr or sys.stderr)
    policy = ApprovalPolicy(settings.approve, settings.auto_approve)

    def check(context: Context[Any, Any], by_round: AskByRound | None) -> ApprovalCheck:
        asked = approver(context, by_round) if approver is not None else None
        return ApprovalCheck(policy, asked, origin="model")

    return [_tool(name, spec, toolbox.hub, check, rounds) for name, spec in offered.items()]


def _renaming_notes(offered: Mapping[str, ToolSpec]) -> list[str]:
    """One line for each tool offered under another name than its own, saying why."""
    notes = []
    for name, spec in offered.items():
        if name == spec.name:
            continue
        if spec.name == EXECUTE_PYTHON:
            why = "execute_python is code mode's own tool"
        elif (holder := offered.get(spec.name)) is not None:
            why = f'"{spec.name}" is {holder.qualified_name}, listed before it'
        else:
            why = "an MCP tool name here holds only letters, digits, _ and - (at most 64)"
        notes.append(f'the excluded tool {spec.qualified_name} is offered as "{name}": {why}')
    return notes


class _UpstreamArguments(ArgModelBase):
    """Every argument as sent: the upstream validates against its own schema (through the hub), not us."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        """All the arguments under one keyword, so no argument name can clash with the context's."""
        return {"arguments": dict(self.model_extra or {})}


def _tool(
    name: str,
    spec: ToolSpec,
    hub: ToolHub,
    check: Callable[[Context[Any, Any], AskByRound | None], ApprovalCheck],
    rounds: Rounds | None,
) -> Tool:
    """An SDK tool with ``spec``'s own schemas and texts, whose calls go to the upstream through ``hub``.

    ``check`` says whose call it is and whom to ask, for the request's client; ``rounds`` holds the calls
    of 2026-07-28 clients that wait for an answer.
    """

    async def call_upstream(
        arguments: dict[str, Any], context: Context[Any, Any]
    ) -> CallToolResult | InputRequiredResult:
        if rounds is None or context.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return await call(arguments, context, _ProgressRelay(context, hub))
        if context.request_state is not None:  # a retry answering the call's approval question
            return await rounds.retry(context)
        relay = _ProgressRelay(context, hub)
        waiting = rounds.open(_same, relay)
        rounds.start(waiting, call(arguments, context, relay, waiting.ask))
        answer = await rounds.reply(waiting)
        assert answer is not None  # without ``until`` a reply waits for the end or a question
        return answer

    async def call(
        arguments: dict[str, Any],
        context: Context[Any, Any],
        relay: _ProgressRelay,
        by_round: AskByRound | None = None,
    ) -> CallToolResult:
        try:
            result = await hub.acall(
                spec.server, spec.name, arguments, progress=relay.forward, approval=check(context, by_round)
            )
        except CodeModeError as exc:  # invalid arguments, timeout, denied, server gone: the caller reads why
            await relay.drain()
            raise MCPToolError(str(exc)) from exc
        await relay.drain()
        try:
            return CallToolResult.model_validate(result)
        except ValidationError as exc:
            problem = f"{spec.qualified_name} answered with a result MCP does not allow: {exc}"
            raise MCPToolError(problem) from exc

    return Tool(
        fn=call_upstream,
        name=name,
        title=spec.title,
        description=spec.description,
        parameters=spec.input_schema,
        # A published output schema without a model: the SDK advertises it and does not check results
        # against it, so the upstream's structuredContent goes out exactly as it came.
        fn_metadata=FuncMetadata(arg_model=_UpstreamArguments, output_schema=spec.output_schema),
        is_async=True,
        context_kwarg="context",
        annotations=_annotations(spec),
    )


def _same(result: CallToolResult) -> CallToolResult:
    return result


def _annotations(spec: ToolSpec) -> ToolAnnotations | None:
    if spec.annotations is None:
        return None
    try:
        return ToolAnnotations.model_validate(spec.annotations)
    except ValidationError:
        log.warning("%s: its annotations are not MCP tool annotations; left out", spec.qualified_name)
        return None


class _ProgressRelay:
    """Forwards one call's upstream progress to the client (the SDK drops it if the client asked for none).

    The hub reports on its own thread; notifications are sent from the MCP server's loop, in order, and
    all of them before the result: ``drain`` waits for those the hub received before the result.
    """

    def __init__(self, context: Context[Any, Any], hub: ToolHub) -> None:
        self._context = context
        self._hub = hub
        self._loop = asyncio.get_running_loop()
        self._sent: list[concurrent.futures.Future[None]] = []

    def rebind(self, context: Context[Any, Any]) -> None:
        """Send from now on for ``context``'s request (a 2026-07-28 client's next round: ``rounds.py``)."""
        self._context = context

    async def forward(self, progress: float, total: float | None, message: str | None) -> None:
        """The hub's progress callback (on the hub's thread): hand the notification to the server's loop."""
        report = self._context.report_progress(progress, total, message)
        self._sent.append(asyncio.run_coroutine_threadsafe(report, self._loop))

    async def drain(self) -> None:
        """Wait until every progress received before the result has gone to the client."""
        # The MCP client runs each progress callback as a task of its own, so the upstream's last progress
        # may still be queued on the hub's loop when the result arrives: one turn of that loop starts it.
        await self._hub.loop_thread.run_async(asyncio.sleep(0))
        for sent in self._sent:
            try:
                await asyncio.wrap_future(sent)
            except Exception:  # the client went away: the result decides what happens next
                log.debug("could not forward progress to the client", exc_info=True)
