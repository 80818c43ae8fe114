"""The kernel's servers and tools in a file beside its connection file, for the JupyterLab sidebar.

Why a file, not a comm: a comm message waits in the kernel's shell queue while a cell runs, and the sidebar
must show the servers then too (and say something while the kernel restarts). So the kernel writes
``codemode-<kernel id>.json`` in the directory of its connection file (the Jupyter runtime directory), and
the server extension (codemode_kernel/labserver) reads it. The kernel id comes from the connection file's
name, ``kernel-<id>.json`` as jupyter_server names it (any other name: its stem).

A thread looks at the servers twice a second and rewrites the file when something changed (a server's
state, a tools/list_changed, a reload); ``notify()`` makes it look at once. Each write is whole (temp file,
rename) and private (mode 0600); the file is removed when the kernel shuts down.

Where programs run is in it too (``executor``). A Ray cluster is asked on a thread of its own
(``ClusterWatch``), at most every 2 s: a cluster that is slow or gone must never hold up the servers' state,
so the file keeps the cluster's last answer and says why it may be out of date.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..atomic_file import write_atomically
from ..config.models import ExecutorSettings
from ..core.records import ExecutorNode, ExecutorState, KernelState, ServerEntry, ToolEntry
from ..doctor import fix_for
from ..hub import ServerStatus
from ..typegen import LiteralType, ToolModel, make_docstring, render_signature

if TYPE_CHECKING:
    from .tools import KernelTools

__all__ = [
    "STATE_VERSION",
    "ClusterStatusSource",
    "ClusterWatch",
    "KernelStateFile",
    "ask_cluster",
    "example_call",
    "executor_state",
    "kernel_id_for",
    "server_entry",
    "state_file_name",
    "tool_entry",
]

STATE_VERSION = 1
_INTERVAL = 0.5
JOBS_LISTED = 20
"""Background runs the file lists (the newest); ``%codemode jobs`` lists all the kernel keeps."""
CLUSTER_INTERVAL = 2.0
"""Seconds between two questions to a Ray cluster about its nodes."""
CLUSTER_PATIENCE = 5.0
"""Seconds a Ray cluster may take to answer before the state says its nodes may be out of date."""
_CONNECTION_FILE = re.compile(r"kernel-(.+)\.json")

log = logging.getLogger(__name__)


def kernel_id_for(connection_file: str | os.PathLike[str]) -> str:
    """The kernel id in a connection file's name (``kernel-<id>.json``); else the file's stem."""
    name = Path(connection_file).name
    match = _CONNECTION_FILE.fullmatch(name)
    return match.group(1) if match else Path(name).stem


def state_file_name(kernel_id: str) -> str:
    """``codemode-<kernel id>.json``: the state file's name in the runtime directory."""
    return f"codemode-{kernel_id}.json"


def server_entry(status: ServerStatus, signin_url: str | None = None) -> ServerEntry:
    """One server as the sidebar shows it (``core/records.py``'s ``ServerEntry``)."""
    return ServerEntry(
        name=status.name,
        state=status.state,
        transport=status.transport,
        tool_count=status.tools,
        error="\n".join([status.error, *status.log_tail_lines("")]) if status.error else None,
        fix=fix_for(status) if status.error else None,
        signin_url=signin_url,
    )


def tool_entry(model: ToolModel) -> ToolEntry:
    """One tool as the sidebar shows it (``core/records.py``'s ``ToolEntry``)."""
    spec = model.spec
    return ToolEntry(
        name=model.function_name,
        server=spec.server,
        tool=spec.name,
        signature=f"def {render_signature(model)}:",
        doc=make_docstring(model),
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        call=example_call(model),
    )


def example_call(model: ToolModel) -> str:
    """A call to insert into a cell: the required parameters, each ``...`` or its first allowed value."""
    arguments = []
    for param in model.params:
        if not param.required:
            continue
        value = "..."
        if isinstance(param.type, LiteralType) and param.type.values:
            first = param.type.values[0]
            value = json.dumps(first) if isinstance(first, str) else repr(first)
        arguments.append(f"{param.name}={value}")
    return f"{model.function_name}({', '.join(arguments)})"


class ClusterStatusSource(Protocol):
    """What tells where programs run: an ``Executor`` (its ``cluster_status()``: None off a cluster)."""

    def cluster_status(self) -> dict[str, Any] | None:
        """The cluster's nodes, their workers and the queue (``ClusterPool.status()``), or None."""


def ask_cluster(executor: ClusterStatusSource) -> Future[dict[str, Any] | None]:
    """``executor.cluster_status()`` on a daemon thread of its own: a cluster that is gone may never answer.

    The caller waits as long as it chooses (``%codemode status``) or not at all (``ClusterWatch``); a call
    that never returns holds only its own thread, which does not keep the process alive.
    """
    answer: Future[dict[str, Any] | None] = Future()

    def ask() -> None:
        try:
            answer.set_result(executor.cluster_status())
        except BaseException as exc:  # the caller reads it from the future
            answer.set_exception(exc)

    threading.Thread(target=ask, name="codemode-cluster-status", daemon=True).start()
    return answer


def executor_state(settings: ExecutorSettings, status: dict[str, Any] | None) -> ExecutorState:
    """Where programs run, as the sidebar shows it: the backend and the cluster's ``ClusterPool.status()``."""
    if settings.backend != "ray":
        return ExecutorState(backend="local")
    state = ExecutorState(backend="ray", address=settings.address or "auto")
    if status is not None:
        state["nodes"] = [_node_entry(node) for node in status.get("nodes", [])]
        state["running"] = int(status.get("running", 0))
        state["queued"] = int(status.get("queued", 0))
    return state


def _node_entry(node: dict[str, Any]) -> ExecutorNode:
    """One node of ``ClusterPool.status()``: its workers are known once its actor started (a run used it)."""
    prepared, running = node.get("prepared"), node.get("running")
    return ExecutorNode(
        node=str(node.get("node", "")),
        address=node.get("address"),
        alive=bool(node.get("alive")),
        cpus=float((node.get("resources") or {}).get("CPU", 0)),
        prepared=int(prepared) if prepared is not None else None,
        running=int(running) if running is not None else None,
    )


class ClusterWatch:
    """The kernel's executor for the state file: ``local``, or a Ray cluster asked every 2 s on a thread.

    ``entry()`` never waits: it gives the cluster's last answer. A question that fails, or that has not been
    answered after ``patience`` seconds, leaves that answer with a ``problem`` saying so; a new answer (or
    failure) calls ``changed`` so the file is rewritten at once.
    """

    def __init__(
        self,
        settings: Callable[[], ExecutorSettings | None],
        executor: Callable[[], ClusterStatusSource],
        changed: Callable[[], None],
        *,
        interval: float = CLUSTER_INTERVAL,
        patience: float = CLUSTER_PATIENCE,
    ) -> None:
        self._settings = settings
        self._executor = executor
        self._changed = changed
        self.interval = interval
        self.patience = patience
        self._lock = threading.Lock()
        self._answer: tuple[ExecutorSettings, dict[str, Any] | None, str | None] | None = None
        """The settings asked about, the cluster's last answer (None before one) and the last failure."""
        self._asking: tuple[ExecutorSettings, float, Future[dict[str, Any] | None]] | None = None
        self._last_asked = -float("inf")

    def entry(self) -> ExecutorState | None:
        """Where programs run now (None: the tools have not started); asks the cluster when it is time."""
        settings = self._settings()
        if settings is None:
            return None
        if settings.backend != "ray":
            return executor_state(settings, None)
        with self._lock:
            self._collect()
            self._ask(settings)
            status, problem = None, None
            if self._answer is not None and self._answer[0] == settings:
                _, status, problem = self._answer
            if self._asking is not None and time.monotonic() - self._asking[1] > self.patience:
                address = settings.address or "auto"
                problem = f"the Ray cluster at {address} has not answered for over {self.patience:g} s"
        state = executor_state(settings, status)
        if problem is not None:
            state["problem"] = problem if status is None else f"{problem}; the nodes shown are from before"
        return state

    def _collect(self) -> None:
        """Keep the answer of a question that ended (with the lock held)."""
        if self._asking is None or not self._asking[2].done():
            return
        settings, _, answer = self._asking
        self._asking = None
        previous = self._answer[1] if self._answer is not None and self._answer[0] == settings else None
        try:
            status = answer.result()
        except Exception as exc:
            address = settings.address or "auto"
            self._answer = (settings, previous, f"the Ray cluster at {address} cannot be reached: {exc}")
        else:
            self._answer = (settings, status if status is not None else previous, None)

    def _ask(self, settings: ExecutorSettings) -> None:
        """Ask the cluster again when none is pending and ``interval`` passed (with the lock held)."""
        now = time.monotonic()
        if self._asking is not None or now - self._last_asked < self.interval:
            return
        self._last_asked = now
        try:
            executor = self._executor()
        except Exception as exc:  # the tools could not start: nothing to ask
            self._answer = (settings, None, str(exc))
            return
        answer = ask_cluster(executor)
        self._asking = (settings, now, answer)
        answer.add_done_callback(lambda _: self._changed())


class KernelStateFile:
    """Keeps ``codemode-<kernel id>.json`` up to date from a thread, and removes it at ``close()``."""

    def __init__(self, tools: KernelTools, connection_file: str | os.PathLike[str]) -> None:
        self.tools = tools
        self.kernel_id = kernel_id_for(connection_file)
        self.path = Path(connection_file).parent / state_file_name(self.kernel_id)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._written: KernelState | None = None
        self._tools_of: list[ToolModel] | None = None
        self._tool_entries: list[ToolEntry] = []
        self.cluster = ClusterWatch(self._executor_settings, tools.executor, self.notify)

    def _executor_settings(self) -> ExecutorSettings | None:
        """The backend in force, once the tools started (the executor is made then)."""
        tools = self.tools
        return tools.executor_settings() if tools.ready and tools.toolbox is not None else None

    def start(self) -> None:
        """Write the file now, then keep it current on a daemon thread."""
        self.write()
        self._thread = threading.Thread(target=self._watch, name="codemode-state-file", daemon=True)
        self._thread.start()

    def notify(self) -> None:
        """Something changed: look again now rather than at the next tick."""
        self._wake.set()

    def close(self) -> None:
        """Stop watching and remove the file (the kernel is shutting down)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def snapshot(self) -> KernelState:
        """What the file holds now (``core/records.py``'s ``KernelState``, without its ``updated`` time)."""
        tools = self.tools
        toolbox = tools.toolbox
        links = tools.signins.links()
        statuses = toolbox.status() if toolbox is not None else []
        servers = [server_entry(s, links.get(s.name)) for s in statuses]
        models = toolbox.models if toolbox is not None and tools.ready else []
        if models is not self._tools_of:  # the list is replaced whenever the tools change
            self._tool_entries = [tool_entry(m) for m in models]
            self._tools_of = models
        state = KernelState(
            version=STATE_VERSION,
            kernel_id=self.kernel_id,
            pid=os.getpid(),
            workspace=str(Path(tools.workspace).absolute()),
            problem=tools.problem,
            servers=servers,
            tools=self._tool_entries,
        )
        if (executor := self.cluster.entry()) is not None:
            state["executor"] = executor
        if jobs := tools.background.entries(JOBS_LISTED):
            state["jobs"] = jobs
        return state

    def write(self) -> bool:
        """Write the file if what it would hold changed; True when it was written."""
        current = self.snapshot()
        if current == self._written and self.path.exists():
            return False
        document: KernelState = {**current, "updated": datetime.now(UTC).isoformat(timespec="milliseconds")}
        text = json.dumps(document, ensure_ascii=False, default=str)
        write_atomically(self.path, text)  # 0600, like every file mkstemp makes
        self._written = current
        return True

    def _watch(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(_INTERVAL)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.write()
            except Exception as exc:  # a full disk must not end the watch, nor the kernel
                log.warning("codemode: the kernel state file %s was not written: %s", self.path, exc)
