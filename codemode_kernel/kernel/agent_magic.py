"""``%%agent``: the cell's text is a request; a model answers it by writing programs (or calling tools).

One Agent per model is kept for the kernel, so a follow-up ``%%agent`` cell continues the conversation
(``--new`` starts over). The agent runs on the hub's loop; its events are handed to this (the main)
thread, which shows them. An interrupt cancels the model request or the program in flight.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class

from ..core.errors import AgentCellError, AgentError, ConfigError, LLMError
from ..views.agent import AgentView
from ..views.display import TRACE_MIME
from .frontend import Frontends, watched
from .pump import run_reporting
from .tools import KernelTools

if TYPE_CHECKING:
    from ..agent import Agent, AgentResult

__all__ = ["AgentMagics"]

_USAGE = "%%agent [--model REF] [--classic] [--max-steps N] [--timeout S] [--new] [--insert] [--no-select]"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="%%agent", add_help=False, exit_on_error=False)
    parser.add_argument("--model", default=None)
    parser.add_argument("--classic", action="store_true")
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=None)
    parser.add_argument("--new", action="store_true")
    parser.add_argument("--insert", action="store_true")
    parser.add_argument("--no-select", action="store_true")
    return parser


@magics_class
class AgentMagics(Magics):
    """The ``%%agent`` magic, bound to one shell's KernelTools."""

    def __init__(self, shell: Any, tools: KernelTools, frontends: Frontends | None = None) -> None:
        super().__init__(shell)
        self.tools = tools
        self.frontends = frontends or Frontends()
        self._agents: dict[tuple[str | None, bool], Agent] = {}

    @cell_magic
    def agent(self, line: str, cell: str) -> None:
        """Ask the configured model; it answers by writing Python programs that call the tools.

        Usage::

            %%agent [--model REF] [--classic] [--max-steps N] [--timeout S] [--new] [--insert] [--no-select]
            Get the weather for each city in cities.txt and tell me the warmest.

        Code mode is on unless the config says ``"enabled": false`` (in ``defaults.codeMode`` or the
        model's own ``codeMode``) or the cell says ``--classic``: the model is offered one tool,
        ``execute_python``, whose description holds the typed stubs of the tools; each program runs in the
        isolated executor with a live trace. In classic mode every tool is offered as an ordinary tool.
        Each step shows the model's text, its program and the record, tokens and time; the final answer is
        shown as Markdown. Follow-up ``%%agent`` cells continue the conversation. With more tools than
        full stubs can describe, a model is first asked which tools the request needs
        (``codeMode.selectModel``, else this model); the cell shows its picks, described as full stubs,
        the rest compactly.

        --model REF      the config's ``models`` entry to use (default: the first)
        --classic        classic tool calling for this conversation (its own, apart from code mode's)
        --max-steps N    model requests allowed for this request (default 20)
        --timeout S      seconds for the whole request (default: no limit; programs keep their own)
        --new            start a new conversation
        --insert         put the final program into a new %%codemode cell below, to read, edit, re-run
        --no-select      do not ask which tools the request needs: the plain compact listing for many tools
        """
        try:
            args, unknown = _parser().parse_known_args(shlex.split(line))
        except (argparse.ArgumentError, ValueError) as exc:
            raise UsageError(f"{exc}\nusage: {_USAGE}") from None
        if unknown:
            raise UsageError(f"unknown option(s) {' '.join(unknown)}\nusage: {_USAGE}")
        request = cell.strip()
        if not request:
            raise UsageError(f"%%agent: write the request in the cell, below the magic line\nusage: {_USAGE}")
        agent = self._agent(args.model, classic=args.classic, new=args.new)
        agent.options = dataclasses.replace(agent.options, select_tools=not args.no_select)
        view = AgentView(live=watched(self.shell), trace_mime=self.frontends.renders(TRACE_MIME))
        self.tools.agent_model = agent.model
        try:
            result = self._run(agent, request, view, max_steps=args.max_steps, timeout=args.timeout)
        finally:
            self.tools.agent_model = None
            view.close()
        self.tools.history.add_agent(agent.model.ref, request, result)
        view.show_answer(result)
        if args.insert and result.final_code and self.shell is not None:
            self.shell.set_next_input(f"%%codemode\n{result.final_code.strip()}\n", replace=False)

    def _agent(self, ref: str | None, *, classic: bool, new: bool) -> Agent:
        """The agent for this model and mode; a classic conversation is kept apart from code mode's."""
        from ..agent import Agent
        from ..llm import open_model

        executor = self.tools.executor()
        toolbox = self.tools.toolbox
        assert toolbox is not None
        key = (ref, classic)
        if new or key not in self._agents or self._agents[key].toolbox is not toolbox:  # reloaded
            try:
                model = open_model(toolbox.config, ref)
            except ConfigError as exc:
                raise UsageError(f"%%agent: {exc}") from None
            settings = self.tools.code_mode_settings(model.ref)  # the admin's timeout filled in
            if toolbox.config.get_model(model.ref).code_mode is not None:
                # The model's own codeMode replaces the defaults: its programs run under those rules.
                executor = self.tools.executor_for(model.ref, settings)
            if classic:
                settings = settings.model_copy(update={"enabled": False})
            try:
                self._agents[key] = Agent(toolbox, executor, model, settings)
            except ConfigError as exc:  # codeMode.selectModel names no model
                raise UsageError(f"%%agent: {exc}") from None
        return self._agents[key]

    def _run(self, agent: Agent, request: str, view: AgentView, **options: Any) -> AgentResult:
        """Run on the hub's loop; show each event from this thread as it comes."""
        loop_thread = agent.toolbox.hub.loop_thread
        tools = self.tools.owned_tools()  # the notebook's @codemode.tool functions
        start = lambda report: agent.run(request, on_event=report, tools=tools, **options)  # noqa: E731
        try:
            return run_reporting(loop_thread, start, view.handle, view.tick)
        except (AgentError, LLMError) as exc:  # said plainly: the message names the cause and the fix
            raise AgentCellError(f"{type(exc).__name__}: {exc}") from None
