"""``%%codemode`` (run a cell in the executor) and ``%codemode status | tools [QUERY] | ...`` (see _USAGE)."""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.display import display

from ..calllog import CallRecord
from ..config import relaxations_report, resolve_code_mode
from ..config.executor_choice import describe_executor
from ..core.errors import CodeModeCellError
from ..core.limits import TimeoutValueError, check_timeout
from ..core.records import NodeAttempt, NoteRecord
from ..executor import ExecutionResult, Executor
from ..executor.jobs import Job
from ..executor.owned import OwnedTool
from ..hub.validation import ArgumentValidator
from ..toolbox import RESERVED_NAMES
from ..typegen import ToolModel, build_tool_models, render_signature
from ..typegen.text import summary
from ..views.display import TRACE_MIME, history_bundle, result_bundle
from ..views.live import LiveView, open_live_view
from ..worker.values import decode_value
from .background import BackgroundApprover, BackgroundRun
from .frontend import Frontends, watched
from .job_actions import job_command
from .line_actions import approve_tools, executor_command, load_artifact, login_server, reconnect_server
from .pump import run_reporting
from .tools import KernelTools

__all__ = ["CodeModeCellError", "CodeModeMagics"]


def _cell_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="%%codemode", add_help=False, exit_on_error=False)
    parser.add_argument("--timeout", type=float, default=None)
    parser.add_argument("--session", default=None)
    parser.add_argument("--in", dest="inputs", nargs="+", action="extend", default=[])
    parser.add_argument("--out", default=None)
    parser.add_argument("--replay", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--background", action="store_true")
    return parser


_USAGE = (
    "%%codemode [--timeout S] [--session NAME] [--in VAR ...] [--out VAR] [--replay] [--quiet]\n"
    "           [--background]\n"
    "%codemode status | tools [QUERY] | history [N] | artifacts | reload [--config FILE]\n"
    "%codemode jobs | wait ID [--timeout S] | cancel ID\n"
    "%codemode reconnect NAME | login NAME | load ARTIFACT NAME | approve [TOOL ...]\n"
    "%codemode executor [local | ray[=ADDRESS]]"
)


@magics_class
class CodeModeMagics(Magics):
    """The Code Mode magics, bound to one shell's KernelTools."""

    def __init__(self, shell: Any, tools: KernelTools, frontends: Frontends | None = None) -> None:
        super().__init__(shell)
        self.tools = tools
        self.frontends = frontends or Frontends()
        self.namespace: dict[str, Any] = shell.user_ns

    @line_cell_magic
    def codemode(self, line: str, cell: str | None = None) -> None:
        """Run a cell as a program in the isolated executor; or, as a line magic, inspect the tools.

        Cell magic::

            %%codemode [--timeout S] [--session NAME] [--in VAR ...] [--out VAR] [--replay] [--quiet]
                       [--background]

        The cell runs in a sandboxed worker process where every MCP tool is a typed function. While it
        runs, a live view shows the tool calls (not in notebooks run unattended, as by nbclient or nbval);
        at the end it becomes the record (status, tool calls with their results, the value or the error
        at its line). A failed program fails the cell.

        --timeout S     seconds before the worker is stopped (SIGINT, grace period, SIGKILL); default: the
                        config's codeMode.timeout, else the kernel's default_timeout, else 30; at most
                        the config's codeMode.maxTimeout (300 unless raised, up to 3600)
        --session NAME  keep the program's globals for the next cell run with the same session name
        --in VAR ...    pass kernel variables in as data (JSON, bytes, DataFrames, arrays; never pickles)
        --out VAR       put the program's value into the kernel namespace as VAR
        --replay        re-run with the tool results recorded by this cell's previous run: no server
                        is called, so nothing happens twice; a call that was not recorded fails
        --quiet         show nothing unless the program fails (no live view either)
        --background    start the program and end the cell at once; its live view keeps updating in this
                        cell while other cells run, and becomes its record at the end. jobs[ID].value has
                        the value then; --out VAR binds it before the next cell runs (never in the middle
                        of one). A kernel interrupt does not stop it; a restart or shutdown does

        Line magic::

            %codemode status              servers, failures with reasons, tool count, sandbox protections
            %codemode tools [QUERY]       the tools whose name or description matches, with signatures
                                          (the notebook's own, @codemode.tool, under "notebook:")
            %codemode history [N]         this kernel's executions (the last N) and direct tool calls
            %codemode artifacts           the artifact browser: previews, and loading one into the namespace
            %codemode reload [--config F] re-read the config (or read F) and reconnect every server
            %codemode reconnect NAME      connect one server again (a stdio server is restarted)
            %codemode login NAME          sign in to a remote server again (OAuth): shows the link; its
                                          tools are in the namespace once you have signed in
            %codemode load ARTIFACT NAME  load an artifact (by id or name) into the namespace as NAME
            %codemode jobs                the background runs: id, status, seconds, first line
            %codemode wait ID [--timeout S] wait for a background run to end (an interrupt stops the
                                          waiting, not the run); binds its --out; ID or its start
            %codemode cancel ID           stop a background run; its cell shows the record (cancelled)
            %codemode executor            where programs run (local, or a Ray cluster) and what each reserves
            %codemode executor local      switch: programs run in worker processes on this machine
            %codemode executor ray[=ADDR] switch: programs run on a Ray cluster (ADDR: auto, HOST:PORT,
                                          ray://HOST:10001; without it the config's, else auto); the
                                          kernel's sessions end with the executor they ran in
        """
        if cell is None:
            self._line(line)
        else:
            self._cell(line, cell)

    # -- %%codemode -------------------------------------------------------------------------------

    def _cell(self, line: str, cell: str) -> None:
        try:
            args, unknown = _cell_parser().parse_known_args(shlex.split(line))
        except (argparse.ArgumentError, ValueError) as exc:
            raise UsageError(f"{exc}\nusage: {_USAGE}") from None
        if unknown:
            raise UsageError(f"unknown option(s) {' '.join(unknown)}\nusage: {_USAGE}")
        executor = self.tools.executor()
        if args.timeout is not None:
            try:
                args.timeout = check_timeout(
                    args.timeout, field="--timeout", maximum=executor.settings.max_timeout
                )
            except TimeoutValueError as exc:
                raise UsageError(f"{exc}\nusage: {_USAGE}") from None
        missing = [name for name in args.inputs if name not in self.namespace]
        if missing:
            raise UsageError(f"--in: no variable named {', '.join(missing)} in this kernel")
        inputs = {name: self.namespace[name] for name in args.inputs}
        cell_id = self.tools.cell_id
        replay = None
        if args.replay:
            previous = self.tools.history.last_for(cell_id, cell)
            if previous is None:
                raise UsageError(
                    "--replay: this cell has not run in this kernel yet, so there is no record to replay; "
                    "run it once without --replay"
                )
            replay = previous.result.tool_calls
        limit = executor.timeout if args.timeout is None else args.timeout  # resolved once: view and run
        if args.background:
            self._background(executor, cell, args, limit=limit, inputs=inputs, replay=replay)
            return
        live = self._live_view(cell, limit, quiet=args.quiet)
        try:
            result = _run_streaming(
                executor,
                cell,
                live,
                timeout=limit,
                inputs=inputs,
                session=args.session,
                replay=replay,
                tools=self.tools.owned_tools(),
            )
            self.tools.history.add(cell_id, cell, result, replayed=args.replay)
            if args.out and result.ok:
                self.namespace[args.out] = decode_value(result.value) if result.value is not None else None
            if not args.quiet or not result.ok:
                show_record(live, *result_bundle(result, replayed=args.replay, code=cell))
        finally:
            if live is not None:
                live.close()  # stopped before the end (an interrupt): the view says so; no-op once finished
        if not result.ok:
            raise CodeModeCellError(result)

    def _live_view(self, cell: str, limit: float, *, quiet: bool) -> LiveView | None:
        """The cell's live view, where someone watches and ``--quiet`` is not given (frontend.py)."""
        if not watched(self.shell) or quiet:
            return None
        return open_live_view(cell, timeout=limit, trace_mime=self.frontends.renders(TRACE_MIME))

    def _background(
        self,
        executor: Executor,
        cell: str,
        args: argparse.Namespace,
        *,
        limit: float,
        inputs: Mapping[str, Any],
        replay: Sequence[Mapping[str, Any]] | None,
    ) -> None:
        """``--background``: show the live view, start the job, say its id; the cell ends (background.py)."""
        cell_id = self.tools.cell_id
        tools = self.tools.owned_tools()
        live = self._live_view(cell, limit, quiet=args.quiet)

        def start_job(report: Callable[[_Event], None]) -> Job:
            return executor.start(
                cell,
                timeout=limit,
                inputs=inputs,
                session=args.session,
                replay=replay,
                tools=tools,
                approver=BackgroundApprover(self.tools.approver),
                **watchers(report, live),
            )

        def on_end(run: BackgroundRun) -> None:
            result = run.result
            assert result is not None
            self.tools.history.add(cell_id, cell, result, replayed=args.replay)
            if not args.quiet or not result.ok:
                show_record(live, *result_bundle(result, replayed=args.replay, code=cell))

        if live is not None:
            live.show()
        kernel = getattr(self.shell, "kernel", None)
        try:
            run = self.tools.background.start(
                start_job,
                live=live,
                handle=handler(live),
                out=args.out,
                code=cell,
                parent=kernel.get_parent("shell") if kernel is not None else None,
                on_end=on_end,
            )
        except BaseException:
            if live is not None:
                live.close()  # it never started: the view does not stay "running"
            raise
        name = self.tools.place_jobs()
        out = f"; --out {args.out} is bound when it ends (before the next cell)" if args.out else ""
        print(
            f"codemode: running in the background as job {run.id}: %codemode wait {run.id}, "
            f"%codemode cancel {run.id}; its value: {name}[{run.id!r}].value{out}"
        )

    # -- %codemode --------------------------------------------------------------------------------

    def _line(self, line: str) -> None:
        words = shlex.split(line)
        command, rest = (words[0], words[1:]) if words else ("status", [])
        if command == "status":
            print(status_text(self.tools))
        elif command == "tools":
            print(tools_text(self.tools, " ".join(rest)))
        elif command == "history":
            self._history(rest)
        elif command == "reload":
            self._reload(rest)
        elif command == "artifacts":
            if rest:
                raise UsageError(f"usage: %codemode artifacts (the browser)\n{_USAGE}")
            display(self.tools.artifacts.browse())  # type: ignore[no-untyped-call]
        elif command == "reconnect":
            print(reconnect_server(self.tools, rest))
        elif command == "login":
            shown = login_server(self.tools, rest)
            if isinstance(shown, str):
                print(shown)
            else:
                display(shown, raw=True)  # type: ignore[no-untyped-call]
        elif command == "load":
            print(load_artifact(self.tools, self.namespace, rest))
        elif command == "approve":
            print(approve_tools(self.tools.approver, rest))
        elif command == "executor":
            print(executor_command(self.tools, rest))
        elif command in ("jobs", "wait", "cancel"):
            print(job_command(self.tools.background, self.namespace, command, rest))
        else:
            raise UsageError(f"unknown subcommand {command!r}\nusage: {_USAGE}")

    def _history(self, words: list[str]) -> None:
        if len(words) > 1 or (words and not words[0].isdigit()):
            raise UsageError(f"usage: %codemode history [N] (the last N executions)\n{_USAGE}")
        runs = self.tools.history.runs()
        if words:
            runs = runs[-int(words[0]) :] if int(words[0]) else []
        toolbox = self.tools.toolbox
        records = toolbox.hub.call_log.records() if toolbox is not None and self.tools.ready else []
        direct = [r.to_json() for r in records if r.execution_id is None]
        display(history_bundle(runs, direct, self.tools.history.agent_runs()), raw=True)  # type: ignore[no-untyped-call]

    def _reload(self, words: list[str]) -> None:
        config: Path | None = None
        if words[:1] == ["--config"] and len(words) == 2:
            config = Path(words[1]).expanduser()
            if not config.is_file():
                raise UsageError(f"--config: no file {config}")
            config = config.absolute()
        elif words:
            raise UsageError(f"usage: %codemode reload [--config FILE]\n{_USAGE}")
        print("codemode: reloading the config and reconnecting the servers...", file=sys.stderr, flush=True)
        self.tools.reload(config)
        print(status_text(self.tools))


def show_record(live: LiveView | None, data: dict[str, Any], metadata: dict[str, Any]) -> None:
    """Show a finished program's record: the live view becomes it, in place, else it is a new output."""
    if live is not None:
        live.finish(data, metadata)
    else:
        display(data, raw=True, metadata=metadata)  # type: ignore[no-untyped-call]


_Event: TypeAlias = CallRecord | tuple[str, str] | list[NodeAttempt] | NoteRecord
"""What a running program reports to the thread showing it: a call started or ended, printed text, the
nodes it runs on, a note (``notify``)."""


def watchers(report: Callable[[_Event], None], live: LiveView | None) -> dict[str, Any]:
    """The run's watchers (``Executor.arun``'s and ``start``'s keywords): each queues its event on ``report``.

    Without a live view only printed text is reported (a quiet or unwatched cell shows nothing else).
    """
    return {
        "on_output": lambda stream, text: report((stream, text)),
        "on_call": report if live is not None else None,
        "on_node": report if live is not None else None,
        "on_note": report if live is not None else None,
    }


def handler(live: LiveView | None) -> Callable[[_Event], None]:
    """Show each event on the calling thread: printed text on its stream, the rest in the live view."""

    def handle(event: _Event) -> None:
        if isinstance(event, CallRecord):
            assert live is not None
            live.call(event)
        elif isinstance(event, list):
            assert live is not None
            live.nodes(event)
        elif isinstance(event, dict):
            assert live is not None
            live.note(event)
        else:
            stream, text = event
            out = sys.stdout if stream == "stdout" else sys.stderr
            out.write(text)
            out.flush()

    return handle


def _run_streaming(
    executor: Executor,
    code: str,
    live: LiveView | None,
    *,
    timeout: float,
    inputs: Mapping[str, Any],
    session: str | None,
    replay: Sequence[Mapping[str, Any]] | None,
    tools: Sequence[OwnedTool],
) -> ExecutionResult:
    """Run the program; print its output and update the live view from this thread as they come.

    ``tools``: the notebook's own tools (``@codemode.tool``), functions in the program beside the servers'.
    """

    def start(report: Callable[[_Event], None]) -> Coroutine[Any, Any, ExecutionResult]:
        return executor.arun(
            code,
            timeout=timeout,
            inputs=inputs,
            session=session,
            replay=replay,
            tools=tools,
            **watchers(report, live),
        )

    if live is not None:
        live.show()
    loop_thread = executor.toolbox.hub.loop_thread
    return run_reporting(loop_thread, start, handler(live), live.tick if live is not None else lambda: None)


def status_text(tools: KernelTools) -> str:
    """Servers, failures with reasons, tool count and the sandbox protections, as text."""
    lines = [f"workspace: {tools.cwd}"]
    if tools.problem:
        lines.append(f"problem: {tools.problem}")
    if tools.toolbox is None:
        return "\n".join(lines)
    if not tools.ready:
        lines.append("servers: still starting")
        return "\n".join(lines)
    config = tools.toolbox.config
    source = config.source or "none found: the embedded demo servers"
    if tools.config_from_admin:
        source = f"{source} (c.CodeModeKernel.config_path: the notebook's directory and the user have none)"
    lines[0] = f"config: {source}\nworkspace: {config.workspace}\n{relaxations_report(config.relaxations)}"
    lines.append("servers:")
    for status in tools.toolbox.status():
        text = f"  {status.name} [{status.transport}]: {status.state}"
        if status.state == "ready":
            text += f", {status.tools} tools"
        if status.error:
            problem = [f"    problem: {status.error}", *status.log_tail_lines()]
            text += "".join(f"\n{line}" for line in problem)
        if note := status.stdout_note():
            text += f"\n    stdout: {note}"
        lines.append(text)
    lines.append(f"tools: {len(tools.toolbox.models)} Python functions")
    if own_tools := tools.codemode.notebook_tools():
        lines.append(f"notebook tools: {len(own_tools)} ({', '.join(own_tools)})")
    own = resolve_code_mode(config, None)
    timeout = tools.admin.settings(own).timeout
    lines.append(f"timeout: {timeout:g} s per execution ({tools.admin.timeout_source(own)})")
    settings = tools.executor_settings()
    lines.append(f"executor: {describe_executor(settings)}")
    if settings.backend == "ray":
        lines.append(f"  {_cluster_summary(tools)}")
    if tools.skipped:
        lines.append(f"not bound (the name was taken): {', '.join(tools.skipped)}")
    lines.append(_protections(tools))
    return "\n".join(lines)


def _cluster_summary(tools: KernelTools) -> str:
    """The Ray cluster in one line (nodes alive, runs, queue); a cluster that fails or is slow says so.

    Asked on a thread of its own and waited for at most ``CLUSTER_PATIENCE`` seconds: ``%codemode status``
    is what a person runs when something is wrong, so a cluster that is gone must not hang it.
    """
    from .state_file import CLUSTER_PATIENCE, ask_cluster

    try:
        status = ask_cluster(tools.executor()).result(timeout=CLUSTER_PATIENCE)
    except TimeoutError:
        return f"cluster: no answer within {CLUSTER_PATIENCE:g} s (it may be gone, or too busy to answer)"
    except Exception as exc:  # a cluster gone, Ray missing: the status still prints
        return f"cluster: cannot be reached: {exc}"
    if not status:
        return "cluster: not in use (the executor runs programs on this machine)"
    from ..executor.cluster.pool import cluster_lines

    return cluster_lines(status)[0]


def _protections(tools: KernelTools) -> str:
    """The protections of this kernel's workers, as one reported them, in ``codemode doctor``'s words."""
    from ..core.errors import CodeModeError
    from ..worker.sandbox import Protections

    try:
        protections = tools.executor().protections()
    except CodeModeError as exc:
        protections = Protections.no_worker(str(exc))
    return protections.describe("sandbox")


def tools_text(tools: KernelTools, query: str) -> str:
    """The signatures of the tools whose name or description contains ``query`` (all without one).

    With no match while servers are still connecting, it waits for them as a cell naming the tool would
    (an interrupt stops the wait); the text names the servers whose tools are not listed yet.
    """
    tools.wait()
    toolbox = tools.toolbox
    if toolbox is None:
        return f"no tools: {tools.problem}"
    query = query.lower()

    def matching() -> list[ToolModel]:
        return [m for m in toolbox.models if not query or query in _searchable(m)]

    if query and not matching() and toolbox.pending:
        print(f"codemode: waiting for {', '.join(toolbox.pending)} to finish connecting...", file=sys.stderr)
        with contextlib.suppress(KeyboardInterrupt):  # an interrupt: say what there is
            toolbox.wait_for_servers(until=lambda: bool(matching()))
    lines = _signatures(matching())
    own = [m for m in _notebook_models(tools) if not query or query in _searchable(m)]
    if own:
        lines += ["notebook:", *(f"  {line}" for line in _signatures(own))]
    connecting = ", ".join(toolbox.pending)
    if not lines:
        return f"no tool matches {query!r}" + (f" yet; still connecting: {connecting}" if connecting else "")
    if connecting:
        lines.append(f"still connecting: {connecting} (their tools are listed once they are ready)")
    return "\n".join(lines)


def _signatures(models: list[ToolModel]) -> list[str]:
    """Each tool's signature and the first sentences of its description (as the compact listing has them)."""
    lines = []
    for model in models:
        lines.append(render_signature(model))
        if description := summary(model.spec.description or "", 160):
            lines.append(f"    {description}")
    return lines


def _notebook_models(tools: KernelTools) -> list[ToolModel]:
    """The notebook's own tools (``@codemode.tool``) as programs see them."""
    specs = [tool.spec for tool in tools.owned_tools()]
    return build_tool_models(specs, check=ArgumentValidator, reserved=RESERVED_NAMES) if specs else []


def _searchable(model: ToolModel) -> str:
    """A tool's name and description, lower case, for ``%codemode tools QUERY``."""
    description = (model.spec.description or "").strip().splitlines()
    return f"{model.function_name} {' '.join(description)}".lower()
