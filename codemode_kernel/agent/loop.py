"""Agent: the loop that sends a request to a model, carries out the calls it asks for, and returns its answer.

    agent = Agent(toolbox, executor, model)
    result = await agent.run("Get the weather for each city in cities.txt")
    print(result.answer, result.round_trips, result.usage)

With code mode on, the model gets ``execute_python`` (plus the tools excluded from code mode as ordinary
tools) and a program does the work of many calls; with it off, every tool is an ordinary tool. The loop is
the same, so both can be compared on one request. The conversation stays on the agent: a second ``run()``
continues it until ``reset()``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import CodeModeSettings, Config, resolve_code_mode
from ..core.errors import AgentError, ConfigError
from ..executor import ExecutionResult, Executor
from ..executor.owned import OwnedTool, owned_models
from ..llm.types import ChatModel, Message, ToolCall
from ..toolbox import RESERVED_NAMES, Toolbox
from . import prompt
from .actions import ActionRunner
from .background import BackgroundProgram, BackgroundPrograms
from .emitter import Emitter
from .events import EventCallback, FinalAnswer, StepFinished, StepStarted, TextDelta, ToolsSelected
from .options import AgentOptions
from .record import AgentResult, AgentStep
from .selection import select_tools
from .toolset import AgentToolset, build_toolset

__all__ = ["Agent"]

log = logging.getLogger(__name__)

_STOPPED_BY = "the agent at the end of its request"
"""Who stopped a program left running when the request ended (its error message says so)."""


@dataclass
class _RunState:
    """Where a run is: its result, the calls of the current step still to carry out, a pending program."""

    result: AgentResult
    toolset: AgentToolset
    runner: ActionRunner
    limit: int
    index: int = 0
    queue: list[ToolCall] = field(default_factory=list)
    waiting: ExecutionResult | None = None
    """The program of ``queue[0]`` that stopped pending, until ``resume``."""
    replay: list[Mapping[str, Any]] | None = None
    """The record (with the caller's answers) the resumed program runs with."""
    tools: Sequence[OwnedTool] = ()
    """The caller's own tools of this run."""
    select: bool = False
    """The tools are many: ask which the request needs before the first step (``agent/selection.py``)."""


class Agent:
    """A conversation between one model and the configured tools, in code mode or classic mode."""

    def __init__(
        self,
        toolbox: Toolbox,
        executor: Executor,
        model: ChatModel,
        settings: CodeModeSettings | None = None,
        *,
        options: AgentOptions | None = None,
        select_model: ChatModel | None = None,
    ) -> None:
        """Set up; nothing is sent until ``run()``.

        Args:
            toolbox: a started Toolbox (its hub runs the ordinary tool calls).
            executor: runs the programs; its ``llm`` handler, when set, makes ``llm()`` available to them.
            model: the chat model (``codemode_kernel.llm``), or anything that follows ``ChatModel``.
            settings: the resolved ``codeMode`` (``resolve_code_mode(config, model.ref)``); by default
                that of ``model.ref`` when the config has such a model, else the config's defaults.
            options: budgets and limits of the conversation.
            select_model: the model asked which tools a request needs when they are too many for full
                stubs (``AgentOptions.select_tools``); by default the one ``codeMode.selectModel`` names,
                else ``model``.

        Raises:
            ConfigError: ``codeMode.selectModel`` names no entry of the config's ``models``.
        """
        self.toolbox = toolbox
        self.executor = executor
        self.model = model
        self.settings = settings if settings is not None else _settings_for(toolbox.config, model.ref)
        self.options = options or AgentOptions()
        self.select_model = select_model or _select_model_for(toolbox.config, self.settings) or model
        """The model that picks the tools for a request (``codeMode.selectModel``, or ``model``)."""
        self.messages: list[Message] = []
        """The conversation so far (the system prompt is sent separately, built for each run)."""
        self._suspended: _RunState | None = None
        """A run stopped ``pending``, until ``resume()`` (or the next ``run()``/``reset()``)."""
        self._background = BackgroundPrograms()
        """The conversation's programs that ran on past their execute_python call (``background.py``)."""

    @property
    def code_mode(self) -> bool:
        """Whether the model writes programs (True) or calls tools one by one (False)."""
        return self.settings.enabled

    def toolset(
        self, tools: Sequence[OwnedTool] = (), *, selected: Sequence[str] | None = None
    ) -> AgentToolset:
        """What the model is offered now: the system prompt and tool definitions (built per run).

        ``tools``: the caller's own tools (``Agent.run(tools=...)``), described as functions beside the
        servers' in execute_python. ``selected``: function names picked for the request, described as
        full stubs when the listing is compact.
        """
        in_code = self.toolbox.models_for(self.settings)
        owned = owned_models(tools, taken=(m.function_name for m in in_code), reserved=RESERVED_NAMES)
        return build_toolset(
            [*in_code, *owned],
            self.toolbox.hub.tool_specs(),
            self.settings,
            self.options,
            llm=self.executor.llm is not None,
            selected=selected,
        )

    def reset(self) -> None:
        """Forget the conversation: the next ``run()`` starts a new one."""
        self.messages.clear()
        self._suspended = None
        self._background.clear()  # each request stopped the programs it left running

    async def run(
        self,
        request: str,
        *,
        max_steps: int | None = None,
        timeout: float | None = None,
        on_event: EventCallback | None = None,
        tools: Sequence[OwnedTool] = (),
    ) -> AgentResult:
        """Answer ``request``, continuing the conversation; returns the answer and every step.

        Args:
            request: what the user asks.
            max_steps: model requests allowed before stopping with a message (default: the options').
            timeout: seconds for the whole request; at the deadline the model request or execution in
                flight is cancelled and the result says so (status ``timeout``). None: no limit.
            on_event: called with each event (``codemode_kernel.agent.events``) on this thread.
            tools: the caller's own tools (``executor.owned.OwnedTool``): functions in the model's programs
                beside the servers'. One with an ``answer`` is answered here (a notebook's function); one
                without is the caller's: a program calling it stops the run with status ``pending`` and
                ``pending_calls``, and ``resume(answers)`` goes on (docs/pending.md).

        Raises:
            AgentError: an execution failed on our side (status ``internal``); ``.result`` holds the steps.
            LLMError: the model request failed (after the provider's retries).
            asyncio.CancelledError: the awaiting task was cancelled; the request or execution in flight is
                cancelled with it, and the conversation is left consistent.
        """
        limit = self.options.max_steps if max_steps is None else max_steps
        if limit < 1:
            raise ValueError(f"max_steps must be at least 1, not {limit}")
        if self._suspended is not None:  # a pending run left behind: its calls are answered as not run
            self._suspended = None
            self._settle(None)
        await self.toolbox.await_servers()  # the model is offered every tool: servers still connecting too
        toolset = self.toolset(tools)
        result = AgentResult(request, "", "answered", toolset.code_mode)
        emit, background = Emitter(on_event), self._background
        runner = ActionRunner(self.toolbox, self.executor, toolset, self.options, emit, tools, background)
        state = _RunState(result, toolset, runner, limit, tools=tools, select=self._selects(toolset))
        self.messages.append(Message("user", request))
        return await self._drive(state, timeout, on_event, mark=len(self.messages) - 1)

    async def resume(
        self,
        answers: Sequence[Mapping[str, Any]],
        *,
        timeout: float | None = None,
        on_event: EventCallback | None = None,
    ) -> AgentResult:
        """Go on with a run that stopped ``pending``: ``answers`` answer its ``pending_calls``.

        Each answer is a record entry (``executor.owned.answered(call, result)`` or ``answered(call,
        error=...)``). The program runs again from the top with the record and the answers (no call is
        made twice), and the conversation goes on from there. The result is the run's, continued: it may
        stop ``pending`` again.

        Raises:
            AgentError: there is no run waiting for answers.
        """
        state = self._suspended
        if state is None or state.waiting is None:
            raise AgentError("nothing to resume: the last run is not waiting for answers (status pending)")
        waiting = state.waiting
        state.replay = [*waiting.tool_calls, *answers]
        state.runner.emit = Emitter(on_event)
        return await self._drive(state, timeout, on_event, mark=None)

    async def _drive(
        self, state: _RunState, timeout: float | None, on_event: EventCallback | None, *, mark: int | None
    ) -> AgentResult:
        result, emit = state.result, state.runner.emit
        started = time.monotonic()
        try:
            try:
                async with asyncio.timeout(timeout) as deadline:
                    await self._steps(state, emit)
            finally:  # however it ends (an answer, the step limit, the timeout, an interrupt)
                _keep_records(state.result, await state.runner.stop_all(_STOPPED_BY))
        except TimeoutError:
            if not deadline.expired():
                self._settle(mark)
                raise
            self._settle(mark)
            result.status, result.answer = "timeout", prompt.timeout_message(timeout or 0.0)
            emit(FinalAnswer(result.answer, "timeout"))
        except BaseException:
            self._settle(mark)
            raise
        finally:
            result.duration_ms += round((time.monotonic() - started) * 1000, 3)
        self._suspended = state if result.status == "pending" else None
        return result

    def _selects(self, toolset: AgentToolset) -> bool:
        """Whether to ask which tools the request needs: code mode, and ``auto`` made the listing compact."""
        return (
            self.options.select_tools
            and toolset.code_mode
            and toolset.compact
            and self.options.listing == "auto"
            and len(toolset.code_tools) > 1
        )

    async def _select(self, state: _RunState, emit: Emitter) -> None:
        """Ask the select model; with usable picks, the run's toolset describes them as full stubs."""
        state.select = False
        selection = await select_tools(
            self.select_model, state.result.request, state.toolset.code_tools, self.options
        )
        state.result.selection = selection
        if selection.used and selection.tools:
            state.toolset = state.runner.toolset = self.toolset(state.tools, selected=selection.tools)
        emit(ToolsSelected(selection))

    async def _steps(self, state: _RunState, emit: Emitter) -> None:
        if state.select:
            await self._select(state, emit)
        result, toolset = state.result, state.toolset
        while True:
            if state.queue:
                if not await self._carry_out(state, emit):
                    return  # a program waits on the caller's answers, or gave the final answer
                continue
            if state.index >= state.limit:
                result.status, result.answer = "max_steps", prompt.max_steps_message(state.limit)
                emit(FinalAnswer(result.answer, "max_steps"))
                return
            state.index += 1
            index = state.index
            step = AgentStep(index)
            result.steps.append(step)
            emit(StepStarted(index))
            started = time.monotonic()
            turn = await self.model.complete(
                self.messages,
                system=toolset.system,
                tools=toolset.offered(ran_on=self._background.ran_on),
                on_text=lambda delta, index=index: emit(TextDelta(index, delta)),  # type: ignore[misc]
                max_tokens=self.options.max_tokens,
            )
            step.model_ms = round((time.monotonic() - started) * 1000, 3)
            step.text, step.usage, step.stop_reason = turn.text, turn.usage, turn.stop_reason
            self.messages.append(Message("assistant", turn.text, tool_calls=turn.tool_calls))
            if not turn.tool_calls:
                emit(StepFinished(index, step.usage, step.model_ms, 0.0))
                result.answer = turn.text
                emit(FinalAnswer(turn.text, "answered"))
                return
            state.queue = list(turn.tool_calls)

    async def _carry_out(self, state: _RunState, emit: Emitter) -> bool:
        """Carry out the current step's calls; False when a program stopped on the caller's tools."""
        step = state.result.steps[-1]
        started = time.monotonic()
        while state.queue:
            call = state.queue[0]
            action = await state.runner.run(step.index, call, replay=state.replay)
            state.replay = None
            if state.waiting is not None:
                step.actions[-1] = action  # the resumed program replaces its pending attempt
            else:
                step.actions.append(action)
            execution = action.execution if action.kind == "code" else action.ended
            step.execution_ms += round((time.monotonic() - started) * 1000, 3)
            started = time.monotonic()
            if execution is not None and execution.status == "pending":
                state.waiting = execution
                state.result.status = "pending"
                state.result.pending_calls = list(execution.pending_calls)
                return False
            state.waiting, state.result.status, state.result.pending_calls = None, "answered", []
            state.queue.pop(0)
            tool_message = Message("tool", action.text, tool_call_id=call.id, is_error=action.is_error)
            self.messages.append(tool_message)
            if execution is not None and execution.status == "internal":
                raise AgentError(_internal_message(execution), result=state.result)
            final = execution.final_answer if execution is not None else None
            if final is not None:  # complete(answer, **data): the program's answer is the agent's
                self._answer_rest(state)
                emit(StepFinished(step.index, step.usage, step.model_ms, step.execution_ms))
                state.result.answer, state.result.data = final
                self.messages.append(Message("assistant", final[0]))
                emit(FinalAnswer(final[0], "answered"))
                return False
        emit(StepFinished(step.index, step.usage, step.model_ms, step.execution_ms))
        return True

    def _answer_rest(self, state: _RunState) -> None:
        """The step's calls after a program that completed are not run; the model is told so."""
        for call in state.queue:
            self.messages.append(
                Message("tool", prompt.NOT_RUN_AFTER_COMPLETE, tool_call_id=call.id, is_error=True)
            )
        state.queue.clear()

    def _settle(self, mark: int | None) -> None:
        """Leave the conversation valid after a run that stopped early.

        A request the model never answered is dropped (retrying it does not send it twice); tool calls
        the model made that got no answer are answered as not run, since providers refuse a conversation
        with an unanswered tool call. ``mark`` is where the run's messages begin (None for a resume: its
        request was answered).
        """
        if mark is not None and not any(m.role == "assistant" for m in self.messages[mark:]):
            del self.messages[mark:]
            return
        last = next((m for m in reversed(self.messages) if m.role == "assistant"), None)
        if last is None:
            return
        answered = {m.tool_call_id for m in self.messages[self.messages.index(last) :] if m.role == "tool"}
        for call in last.tool_calls:
            if call.id not in answered:
                self.messages.append(
                    Message("tool", prompt.CANCELLED_CALL, tool_call_id=call.id, is_error=True)
                )


def _keep_records(result: AgentResult, stopped: Sequence[BackgroundProgram]) -> None:
    """A program stopped while its execute_python call still waited is recorded in its step all the same.

    (The step records a call once it is answered; one the request's end interrupted was answered as
    not run, and its program's result is what the record shows.)
    """
    steps = {step.index: step for step in result.steps}
    for program in stopped:
        step = steps.get(program.step)
        if step is not None and not any(a is program.action for a in step.actions):
            program.action.text = program.action.text or prompt.CANCELLED_CALL
            step.actions.append(program.action)


def _settings_for(config: Config, ref: str) -> CodeModeSettings:
    """The model's own ``codeMode`` when the config knows its ref, else the defaults."""
    known = any(m.ref == ref for m in config.models)
    return resolve_code_mode(config, ref if known else None)


def _select_model_for(config: Config, settings: CodeModeSettings) -> ChatModel | None:
    """The model ``codeMode.selectModel`` names (None when it names none)."""
    if settings.select_model is None:
        return None
    from ..llm import open_model  # the provider SDKs load only when a model is used

    try:
        return open_model(config, settings.select_model)
    except ConfigError as exc:
        raise ConfigError(
            f'codeMode.selectModel "{settings.select_model}": {exc.reason}', file=exc.file, fix=exc.fix
        ) from None


def _internal_message(execution: ExecutionResult) -> str:
    message = execution.error["message"] if execution.error else None
    detail = str(message or f"the execution ended {execution.status}")
    return prompt.INTERNAL_MESSAGE.format(detail=detail[:500])
