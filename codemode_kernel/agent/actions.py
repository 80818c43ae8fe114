"""Carry out one tool call the model asked for: run its program, or call the MCP tool through the hub.

Whatever happens to the call (bad arguments, an unknown name, a failing program, a failing tool), the
model gets text back that says so; only the executor's own failure (status ``internal``) is left for the
loop to stop on. A tool the model calls itself (classic mode, a tool excluded from code mode) is the model's
own call: the hub asks about it as it asks about a program's (``approvals.py``), the executor's approver
deciding, and a denial is a failure the model is told about.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..approvals import ApprovalCheck
from ..budget import keep_whole
from ..calllog import CallRecord
from ..core.errors import (
    ServerError,
    ToolArgumentError,
    ToolError,
    ToolTimeoutError,
    UnknownToolError,
)
from ..core.limits import TimeoutValueError, check_timeout
from ..core.toolspec import ToolSpec
from ..executor import Executor
from ..executor.owned import OwnedTool
from ..llm.types import ToolCall
from ..toolbox import Toolbox
from . import prompt
from .artifact_tools import ARTIFACT_TOOLS, run_artifact_tool
from .emitter import Emitter
from .events import (
    CodeRequested,
    ExecutionFinished,
    ExecutionOutput,
    ExecutionStarted,
    ExecutionToolCall,
    ToolCallFinished,
    ToolCallRequested,
)
from .feedback import ResultText, execution_text, failure_text, tool_result_text
from .options import AgentOptions
from .record import AgentAction
from .toolset import AgentToolset

__all__ = ["ActionRunner"]

_CALL_FAILURES = (ToolArgumentError, UnknownToolError, ToolTimeoutError, ServerError, ToolError)
"""What a classic call can end in without a result; ``ToolError``: it needed approval and was denied."""


class ActionRunner:
    """Runs the calls of one ``run()`` against one toolset."""

    def __init__(
        self,
        toolbox: Toolbox,
        executor: Executor,
        toolset: AgentToolset,
        options: AgentOptions,
        emit: Emitter,
        tools: Sequence[OwnedTool] = (),
    ) -> None:
        self.toolbox = toolbox
        self.executor = executor
        self.toolset = toolset
        self.options = options
        self.emit = emit
        self.tools = tuple(tools)
        """The caller's own tools, functions in every program of the run (``Agent.run(tools=...)``)."""

    async def run(
        self, step: int, call: ToolCall, *, replay: Sequence[Mapping[str, Any]] | None = None
    ) -> AgentAction:
        """Carry out ``call`` and return its record, with the text the model is sent back.

        ``replay``: the record a program that stopped pending resumes with (the caller's answers in it).
        """
        if self.toolset.offers_code and call.name == prompt.EXECUTE_PYTHON:
            return await self._code(step, call, replay)
        if self.toolset.artifact_tools and call.name in ARTIFACT_TOOLS:
            return await self._artifact_tool(step, call)
        spec = self.toolset.classic.get(call.name)
        if spec is None:
            offered = ", ".join(d.name for d in self.toolset.definitions)
            text = f"There is no tool named {call.name!r}. The tools are: {offered}.\n"
            action = AgentAction(call, "tool", text, is_error=True)
            self.emit(ToolCallRequested(step, call.id, call.name, dict(call.arguments)))
            self.emit(ToolCallFinished(step, call.id, call.name, text, True, 0.0))
            return action
        return await self._tool(step, call, spec)

    # -- code mode --------------------------------------------------------------------------------

    async def _code(
        self, step: int, call: ToolCall, replay: Sequence[Mapping[str, Any]] | None = None
    ) -> AgentAction:
        code = call.arguments.get("code")
        if not isinstance(code, str) or not code.strip():
            got = f" (got {call.raw_arguments[:200]!r})" if call.raw_arguments else ""
            text = f'execute_python needs "code": the whole program as one string{got}. Call it again.\n'
            return AgentAction(call, "code", text, is_error=True)
        asked = call.arguments.get("timeout")
        try:
            timeout = (
                self.toolset.timeout
                if asked is None
                else check_timeout(asked, maximum=self.toolset.max_timeout)
            )
        except TimeoutValueError as exc:
            return AgentAction(call, "code", f"{exc}. Then call execute_python again.\n", is_error=True)
        self.emit(CodeRequested(step, call.id, code, timeout))
        self.emit(ExecutionStarted(step, call.id, code))

        def on_output(stream: str, data: str) -> None:
            self.emit(ExecutionOutput(step, call.id, "stderr" if stream == "stderr" else "stdout", data))

        def on_call(record: CallRecord) -> None:
            self.emit(ExecutionToolCall(step, call.id, record))

        started = time.monotonic()
        result = await self.executor.arun(
            code, timeout=timeout, tools=self.tools, replay=replay, on_output=on_output, on_call=on_call
        )
        duration = (time.monotonic() - started) * 1000
        view = execution_text(result, self.options.result_budget)
        saved = await self._keep_whole(view, result.execution_id)
        text = view.render(self.options.result_budget, saved_as=saved)
        self.emit(ExecutionFinished(step, call.id, result, text))
        return AgentAction(call, "code", text, view.is_error, duration, code=code, execution=result)

    async def _keep_whole(self, view: ResultText, execution_id: str) -> str | None:
        """Store the body as an artifact when it will be cut, so the model can read the rest later."""
        if not view.overflows(self.options.result_budget):
            return None
        store = self.executor.artifacts
        reader = "the agent's model"
        artifact = await asyncio.to_thread(keep_whole, store, view.body, execution_id, reader=reader)
        return artifact.id if artifact is not None else None

    # -- classic tools ----------------------------------------------------------------------------

    async def _artifact_tool(self, step: int, call: ToolCall) -> AgentAction:
        arguments = dict(call.arguments)
        self.emit(ToolCallRequested(step, call.id, call.name, arguments))
        started = time.monotonic()
        text, is_error = await asyncio.to_thread(
            run_artifact_tool, self.executor.artifacts, call.name, arguments
        )
        duration = (time.monotonic() - started) * 1000
        text = (
            text
            if len(text) <= self.options.result_budget
            else text[: self.options.result_budget] + "\n[cut]"
        )
        self.emit(ToolCallFinished(step, call.id, call.name, text, is_error, duration))
        return AgentAction(call, "tool", text, is_error, duration, tool=call.name)

    async def _tool(self, step: int, call: ToolCall, spec: ToolSpec) -> AgentAction:
        arguments = dict(call.arguments)
        self.emit(ToolCallRequested(step, call.id, call.name, arguments))
        records: list[CallRecord] = []

        def collect(record: CallRecord) -> None:
            if (
                record.execution_id is None
                and record.server == spec.server
                and record.tool == spec.name
                and record.status != "running"
                and (record.arguments is arguments or (not arguments and not record.arguments))
            ):
                records.append(record)

        unsubscribe = self.toolbox.hub.call_log.subscribe(collect)
        started = time.monotonic()
        wire: dict[str, Any] | None = None
        # The model's own call: asked about like its programs' calls, by the same approver.
        model_call = ApprovalCheck(self.executor.approvals, self.executor.approver, origin="model")
        try:
            wire = await self.toolbox.hub.acall(spec.server, spec.name, arguments, approval=model_call)
        except _CALL_FAILURES as exc:
            view = failure_text(exc)
        else:
            artifact_id = records[-1].artifact_id if records else None
            view = tool_result_text(wire, artifact_id=artifact_id)
        finally:
            with contextlib.suppress(ValueError):
                unsubscribe()
        duration = (time.monotonic() - started) * 1000
        text = view.render(self.options.result_budget)
        self.emit(ToolCallFinished(step, call.id, call.name, text, view.is_error, duration))
        return AgentAction(
            call,
            "tool",
            text,
            view.is_error,
            duration,
            server=spec.server,
            tool=spec.name,
            tool_result=wire,
        )
