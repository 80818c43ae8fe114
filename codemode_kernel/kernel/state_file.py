"""The kernel's servers and tools in a file beside its connection file, for the JupyterLab sidebar.

Why a file, not a comm: a comm message waits in the kernel's shell queue while a cell runs, and the sidebar
must show the servers then too (and say something while the kernel restarts). So the kernel writes
``codemode-<kernel id>.json`` in the directory of its connection file (the Jupyter runtime directory), and
the server extension (codemode_kernel/labserver) reads it. The kernel id comes from the connection file's
name, ``kernel-<id>.json`` as jupyter_server names it (any other name: its stem).

A thread looks at the servers twice a second and rewrites the file when something changed (a server's
state, a tools/list_changed, a reload); ``notify()`` makes it look at once. Each write is whole (temp file,
rename) and private (mode 0600); the file is removed when the kernel shuts down.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..atomic_file import write_atomically
from ..core.records import KernelState, ServerEntry, ToolEntry
from ..doctor import fix_for
from ..hub import ServerStatus
from ..typegen import LiteralType, ToolModel, make_docstring, render_signature

if TYPE_CHECKING:
    from .tools import KernelTools

__all__ = [
    "STATE_VERSION",
    "KernelStateFile",
    "example_call",
    "kernel_id_for",
    "server_entry",
    "state_file_name",
    "tool_entry",
]

STATE_VERSION = 1
_INTERVAL = 0.5
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
        return KernelState(
            version=STATE_VERSION,
            kernel_id=self.kernel_id,
            pid=os.getpid(),
            workspace=str(Path(tools.workspace).absolute()),
            problem=tools.problem,
            servers=servers,
            tools=self._tool_entries,
        )

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
