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
import time

from ..config import CodeModeSettings, Config, resolve_code_mode
from ..errors import AgentError
from ..executor import ExecutionResult, Executor
from ..llm.types import ChatModel, Message
from ..toolbox import Toolbox
from . import prompt
from .actions import ActionRunner
from .emitter import Emitter
from .events import EventCallback, FinalAnswer, StepFinished, StepStarted, TextDelta
from .options import AgentOptions
from .record import AgentResult, AgentStep
from .toolset import AgentToolset, build_toolset

__all__ = ["Agent"]

_STOPPING_STATUSES = ("internal", "pending")


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
    ) -> None:
        """Set up; nothing is sent until ``run()``.

        Args:
            toolbox: a started Toolbox (its hub runs the ordinary tool calls).
            executor: runs the programs; its ``llm`` handler, when set, makes ``llm()`` available to them.
            model: the chat model (``codemode_kernel.llm``), or anything that follows ``ChatModel``.
            settings: the resolved ``codeMode`` (``resolve_code_mode(config, model.ref)``); by default
                that of ``model.ref`` when the config has such a model, else the config's defaults.
            options: budgets and limits of the conversation.
        """
        self.toolbox = toolbox
        self.executor = executor
        self.model = model
        self.settings = settings if settings is not None else _settings_for(toolbox.config, model.ref)
        self.options = options or AgentOptions()
        self.messages: list[Message] = []
        """The conversation so far (the system prompt is sent separately, built for each run)."""

    @property
    def code_mode(self) -> bool:
        """Whether the model writes programs (True) or calls tools one by one (False)."""
        return self.settings.enabled

    def toolset(self) -> AgentToolset:
        """What the model is offered now: the system prompt and tool definitions (built per run)."""
        return build_toolset(
            self.toolbox.models_for(self.settings),
            self.toolbox.hub.tool_specs(),
            self.settings,
            self.options,
            llm=self.executor.llm is not None,
        )

    def reset(self) -> None:
        """Forget the conversation: the next ``run()`` starts a new one."""
        self.messages.clear()

    async def run(
        self,
        request: str,
        *,
        max_steps: int | None = None,
        timeout: float | None = None,
        on_event: EventCallback | None = None,
    ) -> AgentResult:
        """Answer ``request``, continuing the conversation; returns the answer and every step.

        Args:
            request: what the user asks.
            max_steps: model requests allowed before stopping with a message (default: the options').
            timeout: seconds for the whole request; at the deadline the model request or execution in
                flight is cancelled and the result says so (status ``timeout``). None: no limit.
            on_event: called with each event (``codemode_kernel.agent.events``) on this thread.

        Raises:
            AgentError: an execution failed on our side (status ``internal``); ``.result`` holds the steps.
            LLMError: the model request failed (after the provider's retries).
            asyncio.CancelledError: the awaiting task was cancelled; the request or execution in flight is
                cancelled with it, and the conversation is left consistent.
        """
        limit = self.options.max_steps if max_steps is None else max_steps
        if limit < 1:
            raise ValueError(f"max_steps must be at least 1, not {limit}")
        emit = Emitter(on_event)
        await self.toolbox.await_servers()  # the model is offered every tool: servers still connecting too
        toolset = self.toolset()
        result = AgentResult(request, "", "answered", toolset.code_mode)
        started = time.monotonic()
        mark = len(self.messages)
        self.messages.append(Message("user", request))
        try:
            async with asyncio.timeout(timeout) as deadline:
                await self._steps(result, toolset, limit, emit)
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
            result.duration_ms = round((time.monotonic() - started) * 1000, 3)
        return result

    async def _steps(self, result: AgentResult, toolset: AgentToolset, limit: int, emit: Emitter) -> None:
        runner = ActionRunner(self.toolbox, self.executor, toolset, self.options, emit)
        for index in range(1, limit + 1):
            step = AgentStep(index)
            result.steps.append(step)
            emit(StepStarted(index))
            started = time.monotonic()
            turn = await self.model.complete(
                self.messages,
                system=toolset.system,
                tools=toolset.definitions,
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
            started = time.monotonic()
            for call in turn.tool_calls:
                action = await runner.run(index, call)
                step.actions.append(action)
                tool_message = Message("tool", action.text, tool_call_id=call.id, is_error=action.is_error)
                self.messages.append(tool_message)
                if action.execution is not None and action.execution.status in _STOPPING_STATUSES:
                    step.execution_ms = round((time.monotonic() - started) * 1000, 3)
                    raise AgentError(_internal_message(action.execution), result=result)
            step.execution_ms = round((time.monotonic() - started) * 1000, 3)
            emit(StepFinished(index, step.usage, step.model_ms, step.execution_ms))
        result.status, result.answer = "max_steps", prompt.max_steps_message(limit)
        emit(FinalAnswer(result.answer, "max_steps"))

    def _settle(self, mark: int) -> None:
        """Leave the conversation valid after a run that stopped early.

        A request the model never answered is dropped (retrying it does not send it twice); tool calls
        the model made that got no answer are answered as not run, since providers refuse a conversation
        with an unanswered tool call.
        """
        if not any(m.role == "assistant" for m in self.messages[mark:]):
            del self.messages[mark:]
            return
        answered = {m.tool_call_id for m in self.messages[mark:] if m.role == "tool"}
        last = next(m for m in reversed(self.messages) if m.role == "assistant")
        for call in last.tool_calls:
            if call.id not in answered:
                self.messages.append(
                    Message("tool", prompt.CANCELLED_CALL, tool_call_id=call.id, is_error=True)
                )


def _settings_for(config: Config, ref: str) -> CodeModeSettings:
    """The model's own ``codeMode`` when the config knows its ref, else the defaults."""
    known = any(m.ref == ref for m in config.models)
    return resolve_code_mode(config, ref if known else None)


def _internal_message(execution: ExecutionResult) -> str:
    message = execution.error["message"] if execution.error else None
    detail = str(message or f"the execution ended {execution.status}")
    return prompt.INTERNAL_MESSAGE.format(detail=detail[:500])
