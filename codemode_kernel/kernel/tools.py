"""The tools of one IPython shell: config loaded at start, servers connected in the background.

The kernel is ready at once; the servers (a few seconds for stdio ones) connect on a thread. Before
each cell the functions are (re)placed in the user namespace: as ``tools`` and as bare names where the
name is free, beside ``artifacts`` and ``codemode`` (notebook-defined tools, notebook_tools.py). A name the
user bound is never overwritten, and ``%reset`` is repaired on the next cell.
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from IPython.display import clear_output, display

from ..artifacts import ArtifactStore
from ..config import CodeModeSettings, load_config, resolve_code_mode
from ..config.executor_choice import ExecutorChoice, chosen_executor, require_ray
from ..config.models import ExecutorSettings
from ..core.errors import ConfigError, ServerToolCollisionError, ToolsUnavailable, UntrustedConfigError
from ..executor import Executor
from ..executor.owned import OwnedTool
from ..executor.references import Program, await_servers_named, waiting_for, wants_unknown_tools
from ..hub import ServerStatus
from ..llm import ChatModel
from ..toolbox import Toolbox
from ..views.artifacts import KernelArtifacts
from .admin import AdminDefaults
from .approval import kernel_approver
from .background import BackgroundRuns
from .frontend import watched
from .history import History
from .notebook_tools import CodeModeHandle, NotebookToolRegistry, note_dropped
from .run_records import RunRecorder
from .signin import NotebookSignIns, link_bundle

__all__ = ["KernelTools", "ToolsUnavailable"]

_WAIT_LIMIT = 120.0


class KernelTools:
    """One shell's Toolbox (started on a thread), its Executor, and what it put in the namespace."""

    def __init__(self, shell: Any, cwd: Path, admin: AdminDefaults | None = None) -> None:
        self.shell = shell
        self.cwd = cwd
        self.admin = admin or AdminDefaults()
        """What the Jupyter admin set (the kernel's traitlets); the user's config wins over it (admin.py)."""
        self.config_path: Path | None = None
        """A config named with ``%codemode reload --config FILE``; else it is found from ``cwd``."""
        self.config_from_admin = False
        """Whether the config in use is the admin's ``CodeModeKernel.config_path`` (the user has none)."""
        self.toolbox: Toolbox | None = None
        self.problem: str | None = None
        self.started_in: float | None = None
        self.skipped: list[str] = []
        self._ready = threading.Event()
        self._executor: Executor | None = None
        self._placed: dict[str, Any] = {}
        self._own_store: ArtifactStore | None = None
        self._llm_model: ChatModel | None = None
        self._model_executors: dict[str, Executor] = {}
        self.executor_choice: ExecutorChoice | None = None
        """Where programs run, as ``%codemode executor`` chose it over the config's; kept across reloads."""
        self.approver = kernel_approver(shell)
        """Asks the person who ran the cell about calls that need approval (docs/approvals.md); what they
        allowed for the kernel (``a``, ``%codemode approve``) lasts until it restarts."""
        self.agent_model: ChatModel | None = None
        """The model of the ``%%agent`` request running now: its programs' ``llm()`` asks it too."""
        self._reported = False
        self._said: set[str] = set()
        self.kernel_id: str | None = None
        """The Jupyter kernel id (from the connection file's name), for the run records; None in IPython."""
        self.history = History()
        self.history.on_record(RunRecorder(lambda: self.workspace, lambda: self.kernel_id))
        self.on_change: list[Callable[[], None]] = []
        """Called after a reload or reconnect, so the kernel's state file is rewritten at once."""
        self.artifacts = KernelArtifacts(self.artifact_store, shell.user_ns)
        """The ``artifacts`` object of the namespace."""
        self.cell_id: str | None = None
        """The frontend's id of the cell running now (JupyterLab sends one), for ``--replay``."""
        self.notebook_tools = NotebookToolRegistry(taken=self._server_function_names)
        """The functions the notebook made tools (``@codemode.tool``), given to every run."""
        self.background = BackgroundRuns()
        """The ``%%codemode --background`` runs (background.py): ``jobs`` and ``codemode.jobs``."""
        self.codemode = CodeModeHandle(self.notebook_tools, self.background)
        """The ``codemode`` object of the namespace."""
        self.signins = NotebookSignIns(lambda: self.toolbox, self._changed)
        """The sign-ins of remote servers that want one: their links in cells and the sidebar (signin.py)."""

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> None:
        """Load the config now (a problem is kept for the first cell) and connect servers on a thread."""
        admin_file = self.admin.config_file(self.config_path, self.cwd)
        self.config_from_admin = admin_file is not None
        if admin_file is not None and not admin_file.is_file():
            self._fail(
                f"c.CodeModeKernel.config_path names {admin_file}, which is not a file, so no server "
                "started.\n  fix: correct config_path in the kernel's config (codemode_kernel_config.py), or "
                "write a codemode.json in the notebook's directory; then restart the kernel"
            )
            return
        try:
            config = load_config(admin_file or self.config_path, cwd=self.cwd)
        except UntrustedConfigError as exc:
            self._fail(
                f"the project config {exc.file} is not trusted yet, so none of its servers started.\n"
                f"  problem: {exc.reason}\n  fix: {exc.fix}, then restart the kernel"
            )
            return
        except ConfigError as exc:
            named = " (c.CodeModeKernel.config_path)" if admin_file is not None else ""
            self._fail(
                f"the config {exc.file or ''}{named} cannot be used: {exc}\n  fix: correct it, then restart"
            )
            return
        self.toolbox = Toolbox(config)
        # A server's question during the person's own call (a tool called in a cell) asks them too.
        self.toolbox.hub.asking.person = self.approver
        threading.Thread(target=self._connect, name="codemode-tools", daemon=True).start()

    def _connect(self) -> None:
        began = time.monotonic()
        assert self.toolbox is not None
        try:
            self.toolbox.start()
            self.signins.offer()  # its link reaches the sidebar while the worker warms up
            self._executor = self._new_executor()
            self._executor.warm()  # the first %%codemode then finds its worker ready
        except BaseException as exc:
            self.problem = f"the tools could not start: {exc}"
        finally:
            self.started_in = time.monotonic() - began
            self._ready.set()

    def _fail(self, problem: str) -> None:
        self.problem = problem
        self._ready.set()

    @property
    def ready(self) -> bool:
        """True once the servers have connected (or failed to)."""
        return self._ready.is_set()

    def wait(self, *, quiet: bool = False) -> None:
        """Block until the servers are connected; an interrupt stops the wait.

        Says so once on stderr, unless ``quiet`` (the caller shows a status of its own).
        """
        if not self._ready.is_set():
            if not quiet:
                print("codemode: waiting for the MCP servers to start...", file=sys.stderr, flush=True)
            deadline = time.monotonic() + _WAIT_LIMIT
            while not self._ready.wait(0.1):
                if time.monotonic() > deadline:
                    raise ToolsUnavailable(f"the MCP servers did not start within {_WAIT_LIMIT:.0f} s")

    def executor(self) -> Executor:
        """The shell's Executor, made on first use once the tools are ready."""
        self._require_tools()
        if self._executor is None:
            self._executor = self._new_executor()
        return self._executor

    def _require_tools(self) -> None:
        """Wait for the tools; ToolsUnavailable when they could not start (the config, say)."""
        self.wait()
        if self.toolbox is None or (self.problem and not self.toolbox.models):
            raise ToolsUnavailable(self.problem or "no tools")

    def _new_executor(self, settings: CodeModeSettings | None = None) -> Executor:
        """An Executor with the kernel's approver and ``llm()``, on the backend in force.

        Raises:
            RayNotInstalledError: that backend is Ray, and Ray is not installed.
        """
        assert self.toolbox is not None
        backend = self.executor_settings()
        require_ray(backend)
        return Executor(
            self.toolbox,
            settings=settings if settings is not None else self.code_mode_settings(None),
            llm=self.answer_llm,
            approver=self.approver,
            executor=backend,
        )

    def executor_settings(self) -> ExecutorSettings:
        """Where programs run: the config's ``executor`` with ``%codemode executor``'s choice over it."""
        assert self.toolbox is not None
        return chosen_executor(self.toolbox.config, self.executor_choice)

    def switch_executor(self, choice: ExecutorChoice) -> None:
        """Run programs where ``choice`` says from now on: the Executors are closed and made anew.

        Sessions end with their workers. Nothing changes when the choice cannot be used (Ray missing).

        Raises:
            ToolsUnavailable: the tools could not start, so there is no executor to switch.
            RayNotInstalledError: ``choice`` is Ray, and Ray is not installed.
        """
        self._require_tools()
        assert self.toolbox is not None
        require_ray(chosen_executor(self.toolbox.config, choice))
        self._close_executors()
        self.executor_choice = choice
        self._executor = self._new_executor()
        self._executor.warm()  # as at start: the next %%codemode finds its worker ready

    def code_mode_settings(self, model_ref: str | None) -> CodeModeSettings:
        """The config's code-mode settings for ``model_ref`` (None: the defaults), admin's timeout filled in.

        The admin's ``default_timeout`` applies where the config names no timeout (admin.py).

        Raises:
            ConfigError: ``model_ref`` is not one of the config's models.
        """
        assert self.toolbox is not None
        return self.admin.settings(resolve_code_mode(self.toolbox.config, model_ref))

    async def answer_llm(self, request: dict[str, Any]) -> str:
        """A program's ``llm()``: asked with the agent's model while ``%%agent`` runs, else the first one."""
        from ..core.errors import LLMError
        from ..llm import answer_request, open_model

        if self.toolbox is None:
            raise LLMError("llm(): the config could not be loaded, so no model is known")
        model = self.agent_model or self._llm_model
        if model is None:
            try:
                model = self._llm_model = open_model(self.toolbox.config, None)
            except ConfigError as exc:  # no model configured: the program sees an LLMError saying so
                raise LLMError(f"llm(): {exc}") from None
        return await answer_request(model, request)

    @property
    def workspace(self) -> Path:
        """Where ``.codemode/`` is (artifacts, history): the config's workspace, else the start directory."""
        return Path(self.toolbox.config.workspace) if self.toolbox is not None else self.cwd

    def artifact_store(self) -> ArtifactStore:
        """The workspace's store: the executor's once the tools are up (one connection for both)."""
        if self._executor is not None:
            return self._executor.artifacts
        workspace = self.toolbox.config.workspace if self.toolbox is not None else self.cwd
        if self._own_store is None or self._own_store.path != Path(workspace) / ".codemode" / "artifacts.db":
            self._own_store = ArtifactStore.for_workspace(workspace)
        return self._own_store

    def executor_for(self, ref: str, settings: CodeModeSettings) -> Executor:
        """An Executor with a model's own codeMode settings (made once per model ref)."""
        self.executor()  # the tools must be ready
        assert self.toolbox is not None
        if ref not in self._model_executors:
            self._model_executors[ref] = self._new_executor(settings)
        return self._model_executors[ref]

    def close(self) -> None:
        """End sign-ins still waiting, stop the executor's processes and disconnect the servers."""
        self.signins.close()
        self._close_executors()
        if self.toolbox is not None and self._ready.is_set():
            self.toolbox.close()

    def _close_executors(self) -> None:
        """Stop every Executor's processes (and sessions); the next run makes a new one."""
        for executor in self._model_executors.values():
            executor.close()
        self._model_executors.clear()
        if self._executor is not None:
            self._executor.close()
            self._executor = None

    def reload(self, config_path: Path | None = None) -> None:
        """Re-read the config (or read ``config_path``) and reconnect every server.

        The namespace then holds the new tools: names placed for the old ones are removed (unless the
        user rebound them). The history is kept.
        """
        self.wait()
        if config_path is not None:
            self.config_path = config_path
        self.close()
        namespace = self.shell.user_ns
        for name, value in self._placed.items():
            if namespace.get(name) is value:
                del namespace[name]
            self.shell.user_ns_hidden.pop(name, None)
        self._placed.clear()
        self.skipped.clear()
        self.toolbox, self.problem, self._reported, self._llm_model = None, None, False, None
        self._ready = threading.Event()
        self.start()
        self.wait()
        self.place()
        self._changed()

    def reconnect(self, server: str) -> ServerStatus:
        """Connect one server again now (a stdio server is restarted) and place its tools; its status after.

        Raises:
            ToolsUnavailable: the tools could not start at all (the config), so there is nothing to reconnect.
            UnknownToolError: no server of that name; ServerError: it is disabled.
        """
        self.wait()
        if self.toolbox is None:
            raise ToolsUnavailable(self.problem or "no tools")
        try:
            status = self.toolbox.hub.reconnect(server)  # its tools are rebuilt when it is ready
        finally:
            self._changed()
        self.place()
        return status

    def _changed(self) -> None:
        for listener in self.on_change:
            listener()

    # -- notebook tools ---------------------------------------------------------------------------

    def owned_tools(self) -> list[OwnedTool]:
        """The notebook's tools for a run (``%%codemode``, ``%%agent``), less those whose function is gone."""
        self._forget_after_reset()
        return self.notebook_tools.owned_tools(self.shell.user_ns)

    def after_cell(self, result: Any = None) -> None:
        """After each cell: drop the notebook tools whose function it deleted or redefined undecorated.

        Said in that cell's output; after ``%reset`` every notebook tool is gone, silently.
        """
        self._forget_after_reset()
        note_dropped(self.notebook_tools.prune(self.shell.user_ns))

    def _forget_after_reset(self) -> None:
        """``%reset`` (or ``del codemode``) took ``codemode`` away: the notebook's tools go with it."""
        if "codemode" in self._placed and "codemode" not in self.shell.user_ns:
            self.notebook_tools.clear()
            del self._placed["codemode"]
            self.shell.user_ns_hidden.pop("codemode", None)

    def _server_function_names(self) -> list[str]:
        """The configured servers' tools' names in programs, as far as they are connected now."""
        if self.toolbox is None or not self.ready:
            return []
        return [model.function_name for model in self.toolbox.models]

    # -- the namespace ----------------------------------------------------------------------------

    def before_cell(self, info: Any = None) -> None:
        """Before each cell: wait for the tools it needs, report a problem once, place the functions.

        A cell that names no tool (plain Python, which the first cell of a notebook often is) runs at once
        while the servers start; the tools are placed before the first cell after they are ready.
        """
        self.cell_id = getattr(info, "cell_id", None)
        cell = getattr(info, "raw_cell", None)
        program = functools.cache(functools.partial(self._program, cell))  # parsed once, when needed
        if not self._ready.is_set() and not self._needs_tools(cell, program):
            self.place()
            return
        try:
            if not self._ready.is_set():
                with _status(self.shell, "codemode: starting the MCP servers..."):
                    self.wait(quiet=True)
            self._await_servers_named(program)
        except (KeyboardInterrupt, ToolsUnavailable) as exc:
            connecting = self.toolbox.pending if self.toolbox is not None and self.ready else []
            which = f"the tools of {', '.join(connecting)}" if connecting else "the tools"
            print(
                f"codemode: {str(exc) or 'interrupted'}; {which} are not in the namespace yet",
                file=sys.stderr,
            )
        if self.problem and not self._reported:
            self._reported = True
            print(f"codemode: {self.problem}", file=sys.stderr, flush=True)
        self.place()
        self._show_sign_ins()

    def _show_sign_ins(self) -> None:
        """Start the sign-ins servers want, and put each new link in this cell's output (once)."""
        if self.toolbox is None or not self.ready:
            return
        self.signins.offer()
        for pending in self.signins.unshown():
            display(link_bundle(pending), raw=True)  # type: ignore[no-untyped-call]

    def _await_servers_named(self, program: Callable[[], Program | None]) -> None:
        """Wait for servers still connecting if the cell names a tool not there yet (or lists them)."""
        toolbox = self.toolbox
        if toolbox is None or not toolbox.pending or (parsed := program()) is None:
            return
        namespace = self.shell.user_ns
        if waiting := waiting_for(toolbox, parsed, namespace):
            with _status(self.shell, f"codemode: waiting for {', '.join(waiting)} to finish connecting..."):
                toolbox.hub.loop_thread.run(await_servers_named(toolbox, parsed, namespace))

    def _refresh(self) -> None:
        """Type the functions with the shapes the last cell's calls showed, and take in new tools.

        A server that connected late with a tool whose name another server's tool has is a config problem:
        said once (the message names both servers and the fixes), not as a traceback in every cell.
        """
        assert self.toolbox is not None
        try:
            self.toolbox.refresh()
        except ServerToolCollisionError as exc:
            if str(exc) not in self._said:
                self._said.add(str(exc))
                print(f"codemode: {exc}", file=sys.stderr, flush=True)

    def _needs_tools(self, cell: str | None, program: Callable[[], Program | None]) -> bool:
        """Whether a cell run while the servers start may need them: a magic, or a name nothing defines."""
        if not cell or not cell.strip():
            return False
        if any(line.lstrip().startswith("%") for line in cell.splitlines()):
            return True  # %%codemode, %%agent, %codemode ...: and a magic's own code is a string
        parsed = program()
        if parsed is None:
            return True  # IPython reports it when it runs the cell
        return wants_unknown_tools(parsed, lambda name: False, self.shell.user_ns)

    def _program(self, cell: str | None) -> Program | None:
        """The cell as Python (%magics become calls), parsed; None when IPython cannot transform it."""
        if not cell:
            return None
        try:
            return Program.parse(self.shell.transform_cell(cell))
        except Exception:
            return None  # IPython reports it when it runs the cell

    def place_jobs(self) -> str:
        """Put ``jobs`` (the background runs) into the namespace unless the user has a ``jobs`` of their own.

        Returns the name that reaches them: ``jobs``, else ``codemode.jobs``.
        """
        namespace = self.shell.user_ns
        current = namespace.get("jobs", _ABSENT)
        if current is not _ABSENT and current is not self.background:
            return "codemode.jobs"
        namespace["jobs"] = self.background
        self.shell.user_ns_hidden["jobs"] = self.background
        return "jobs"

    def place(self) -> None:
        """Put ``codemode``, ``tools`` and every free tool name into the namespace, hidden from ``%who``."""
        self._forget_after_reset()
        namespace = self.shell.user_ns
        wanted: dict[str, Any] = {"codemode": self.codemode}
        if self.toolbox is not None and self.ready:
            self._refresh()
            wanted.update({"tools": self.toolbox.tools, "artifacts": self.artifacts})
            wanted.update({name: self.toolbox.tools[name] for name in dir(self.toolbox.tools)})
        skipped = []
        for name, value in wanted.items():
            current = namespace.get(name, _ABSENT)
            if current is value:
                continue
            if current is not _ABSENT and current is not self._placed.get(name, _ABSENT):
                skipped.append(name)  # the user's own binding wins
                continue
            namespace[name] = value
            self.shell.user_ns_hidden[name] = value
            self._placed[name] = value
        new = [name for name in skipped if name not in self.skipped]
        if "codemode" in new:
            self.skipped.append("codemode")
            new.remove("codemode")
            print(
                "codemode: the name codemode is bound to your own value in this kernel, so @codemode.tool "
                "is not available; del codemode to get it back",
                file=sys.stderr,
                flush=True,
            )
        if new:
            self.skipped.extend(new)
            print(
                f"codemode: {', '.join(new)} already bound in this kernel; use tools.{new[0]} "
                f"{'and the like ' if len(new) > 1 else ''}for the tool",
                file=sys.stderr,
                flush=True,
            )


_ABSENT = object()


@contextmanager
def _status(shell: Any, text: str) -> Iterator[None]:
    """A line in the cell's output while the cell waits for servers, gone when the wait ends.

    Shown as a display (not stderr, which JupyterLab paints as an error) and removed with
    ``clear_output``: this runs before the cell's code, so the status is all the output there is yet.
    Only where someone watches (``watched``): nbval compares outputs as first sent, clearing included.
    """
    if not watched(shell):
        yield
        return
    display({"text/plain": text}, raw=True)  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        clear_output()  # type: ignore[no-untyped-call]
