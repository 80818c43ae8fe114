"""Carry out one tool call the model asked for: run its program, or call the MCP tool through the hub.

Whatever happens to the call (bad arguments, an unknown name, a failing program, a failing tool), the
model gets text back that says so; only the executor's own failure (status ``internal``) is left for the
loop to stop on. A tool the model calls itself (classic mode, a tool excluded from code mode) is the model's
own call: the hub asks about it as it asks about a program's (``approvals.py``), the executor's approver
deciding, and a denial is a failure the model is told about.

A program runs in the background (``Executor.start``) and is waited for ``wait_s`` seconds; one still
running then is answered as running and kept in the conversation's table (``background.py``), where
wait_execution, cancel_execution and list_executions find it.
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
from ..core.records import NoteRecord
from ..core.toolspec import ToolSpec
from ..executor import ExecutionResult, Executor
from ..executor.jobs import JobUpdate
from ..executor.owned import OwnedTool
from ..llm.types import ToolCall
from ..toolbox import Toolbox
from . import prompt
from .artifact_tools import ARTIFACT_TOOLS, run_artifact_tool
from .background import BackgroundProgram, BackgroundPrograms
from .emitter import Emitter
from .events import (
    CodeRequested,
    ExecutionFinished,
    ExecutionNote,
    ExecutionOutput,
    ExecutionRunning,
    ExecutionStarted,
    ExecutionToolCall,
    ToolCallFinished,
    ToolCallRequested,
)
from .feedback import ResultText, execution_text, failure_text, tool_result_text
from .options import AgentOptions
from .record import AgentAction
from .running import (
    CANCEL_EXECUTION,
    DEFAULT_WAIT_S,
    FOLLOW_UP_TOOLS,
    LIST_EXECUTIONS,
    MAX_WAIT_S,
    running_text,
)
from .toolset import AgentToolset

__all__ = ["ActionRunner"]

_CALL_FAILURES = (ToolArgumentError, UnknownToolError, ToolTimeoutError, ServerError, ToolError)
"""What a classic call can end in without a result; ``ToolError``: it needed approval and was denied."""
_END_MARGIN_S = 10.0
"""Beyond the executor's grace period: how long a cancelled program's end is awaited."""


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
        background: BackgroundPrograms | None = None,
    ) -> None:
        self.toolbox = toolbox
        self.executor = executor
        self.toolset = toolset
        self.options = options
        self.emit = emit
        self.tools = tuple(tools)
        """The caller's own tools, functions in every program of the run (``Agent.run(tools=...)``)."""
        self.background = background if background is not None else BackgroundPrograms()
        """The programs that ran on after their call (the conversation's: ``Agent`` passes its own)."""

    async def run(
        self, step: int, call: ToolCall, *, replay: Sequence[Mapping[str, Any]] | None = None
    ) -> AgentAction:
        """Carry out ``call`` and return its record, with the text the model is sent back.

        ``replay``: the record a program that stopped pending resumes with (the caller's answers in it).
        """
        if self.toolset.offers_code and call.name == prompt.EXECUTE_PYTHON:
            return await self._code(step, call, replay)
        if self.toolset.offers_code and self.background.ran_on and call.name in FOLLOW_UP_TOOLS:
            if replay is not None:  # its program stopped pending: it runs again with the answers
                return await self._resume(step, call, replay)
            return await self._follow_up(step, call)
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
        wait_s = _wait_seconds(call.arguments.get("wait_s"))
        if isinstance(wait_s, str):
            return AgentAction(call, "code", f"{wait_s} Then call execute_python again.\n", is_error=True)
        return await self._start(step, call, code, timeout, wait_s, replay)

    async def _start(
        self,
        step: int,
        call: ToolCall,
        code: str,
        timeout: float,
        wait_s: float,
        replay: Sequence[Mapping[str, Any]] | None,
    ) -> AgentAction:
        """Start the program and wait up to ``wait_s`` for its end (or a note); answer with either."""
        self.emit(CodeRequested(step, call.id, code, timeout))
        self.emit(ExecutionStarted(step, call.id, code))
        started = time.monotonic()
        job = self.executor.start(
            code, timeout=timeout, tools=self.tools, replay=replay, **self._watchers(step, call)
        )
        action = AgentAction(call, "code", code=code, execution_id=job.execution_id)
        program = BackgroundProgram(job, action, step, timeout)
        self.background.add(program)  # before the wait: a request stopped during it stops the program too
        result = await job.wait_async(wait_s, until_note=True) if wait_s > 0 else job.result
        action.duration_ms = (time.monotonic() - started) * 1000
        if result is None:
            update = program.read(self._update_chars)
            if job.result is None:
                return self._running(program, update)
            result = job.result  # it ended just now: answered as ended
        self.background.discard(job.execution_id)
        view = execution_text(result, self.options.result_budget)
        saved = await self._keep_whole(view, result.execution_id)
        action.text = view.render(self.options.result_budget, saved_as=saved)
        action.is_error, action.execution = view.is_error, result
        self.emit(ExecutionFinished(step, call.id, result, action.text))
        return action

    def _watchers(self, step: int, call: ToolCall) -> dict[str, Any]:
        """The program's output, calls and notes as events of the execute_python call that started it.

        They keep coming while the program runs on after the call was answered; the emitter read at
        each event is the current one (a resumed run sets its own).
        """

        def on_output(stream: str, data: str) -> None:
            self.emit(ExecutionOutput(step, call.id, "stderr" if stream == "stderr" else "stdout", data))

        def on_call(record: CallRecord) -> None:
            self.emit(ExecutionToolCall(step, call.id, record))

        def on_note(note: NoteRecord) -> None:
            self.emit(ExecutionNote(step, call.id, note))

        return {"on_output": on_output, "on_call": on_call, "on_note": on_note}

    def _running(self, program: BackgroundProgram, update: JobUpdate) -> AgentAction:
        """Answer execute_python with what the program did so far; it runs on, for wait_execution."""
        self.background.ran_on = True
        action = program.action
        view = running_text(update, tool_calls=len(program.calls), budget=self.options.result_budget)
        action.text, action.ran_on = view.render(self.options.result_budget), True
        self.emit(ExecutionRunning(program.step, action.call.id, program.execution_id, action.text))
        return action

    # -- programs that ran on: wait_execution, cancel_execution, list_executions ---------------------

    async def _follow_up(self, step: int, call: ToolCall) -> AgentAction:
        """wait_execution, cancel_execution or list_executions: an ordinary tool call on the table."""
        arguments = dict(call.arguments)
        self.emit(ToolCallRequested(step, call.id, call.name, arguments))
        started = time.monotonic()
        ended: ExecutionResult | None = None
        program: BackgroundProgram | None = None
        if call.name == LIST_EXECUTIONS:
            text, is_error = self._list(), False
        else:
            program, problem = self._named(call)
            if program is None:
                text, is_error = problem, True
            elif call.name == CANCEL_EXECUTION:
                text, is_error, ended = await self._cancel(program)
            else:
                wait_s = _wait_seconds(arguments.get("wait_s"))
                if isinstance(wait_s, str):
                    text, is_error = f"{wait_s} Call wait_execution again.\n", True
                else:
                    text, is_error, ended = await self._wait(program, wait_s)
        duration = (time.monotonic() - started) * 1000
        self.emit(ToolCallFinished(step, call.id, call.name, text, is_error, duration))
        ident = program.execution_id if program is not None else None
        return AgentAction(call, "tool", text, is_error, duration, execution_id=ident, ended=ended)

    async def _resume(self, step: int, call: ToolCall, replay: Sequence[Mapping[str, Any]]) -> AgentAction:
        """The program whose pending end this call read runs again from the top, with the answers."""
        program, _ = self._named(call)
        assert program is not None, "a pending end was read from a program of the table"
        return await self._start(step, call, program.job.code, program.timeout, DEFAULT_WAIT_S, replay)

    def _named(self, call: ToolCall) -> tuple[BackgroundProgram | None, str]:
        """The program the call names, or why there is none (naming the ids there are)."""
        ident = call.arguments.get("execution_id")
        program = self.background.get(ident) if isinstance(ident, str) else None
        if program is not None:
            return program, ""
        what = f"no program with execution_id {ident!r}" if ident else 'no "execution_id"'
        return None, (
            f"{call.name}: {what}. The programs you can name: {self.background.known_ids()} (each "
            "execute_python answer that said running gave its execution_id).\n"
        )

    async def _wait(
        self, program: BackgroundProgram, wait_s: float
    ) -> tuple[str, bool, ExecutionResult | None]:
        """Wait up to ``wait_s`` for the end or a note (not at all when a note is unread), then report."""
        unread_note = bool(program.job.updates(program.cursor, max_chars=0).notes)
        if not program.job.done and not unread_note and wait_s > 0:
            await program.job.wait_async(wait_s, until_note=True)
        return await self._report(program)

    async def _cancel(self, program: BackgroundProgram) -> tuple[str, bool, ExecutionResult | None]:
        """Stop the program (as at its deadline) and report its end, status ``cancelled``."""
        program.job.cancel("the model (cancel_execution)")
        await program.job.wait_async(self.executor.grace + _END_MARGIN_S)
        return await self._report(program)

    async def _report(self, program: BackgroundProgram) -> tuple[str, bool, ExecutionResult | None]:
        """What came since the model's last answer: the running text, or the end with the result."""
        update = program.read(self._update_chars)
        budget = self.options.result_budget
        result = program.job.result  # once ended, the record has all the output the update may leave out
        if result is None:
            running = running_text(update, tool_calls=len(program.calls), budget=budget)
            return running.render(budget), False, None
        view = execution_text(result, budget)  # as a program that ended within its call: the record whole
        saved = await self._keep_whole(view, result.execution_id)
        text = view.render(budget, saved_as=saved)
        self.collect(program, result, text)
        return text, view.is_error, result

    def collect(self, program: BackgroundProgram, result: ExecutionResult, text: str) -> None:
        """The program ended and its end was read: its execute_python record gets the result, once."""
        if program.collected:
            return
        program.collected = True
        action = program.action
        action.execution, action.is_error = result, result.status != "ok"
        self.emit(ExecutionFinished(program.step, action.call.id, result, text))

    def _list(self) -> str:
        listed = self.background.listed()
        if not listed:
            return "No program is running, and every program's end was read.\n"
        return "".join(f"{program.describe()}\n" for program in listed)

    async def stop_all(self, by: str) -> list[BackgroundProgram]:
        """Stop every program still running (a request that ends), and record how each ended.

        Each is cancelled at once; their ends are then awaited (bounded by the grace period), and each
        result goes into the record of the execute_python call that started it. Returns those programs.
        """
        programs = self.background.uncollected()
        for program in programs:
            program.job.cancel(by)  # nothing for one that ended already
        for program in programs:
            result = await program.job.wait_async(self.executor.grace + _END_MARGIN_S)
            if result is not None:
                self.collect(program, result, execution_text(result).render(self.options.result_budget))
        return programs

    @property
    def _update_chars(self) -> int:
        """The output one running answer carries: the budget less room for the notes and the status line."""
        return max(self.options.result_budget - 600, self.options.result_budget // 2)

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


def _wait_seconds(value: Any) -> float | str:
    """``wait_s`` as seconds (the default when absent), or what is wrong with it."""
    if value is None:
        return DEFAULT_WAIT_S
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_WAIT_S:
        return f"wait_s must be a number of seconds from 0 to {MAX_WAIT_S:g}, not {value!r}."
    return float(value)
