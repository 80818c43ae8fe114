"""Drive a Code Mode kernel through jupyter_client: run code, collect its messages."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import KernelManager

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@dataclass
class Reply:
    status: str
    content: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    elapsed: float = 0.0
    questions: list[str] = field(default_factory=list)
    """The input requests the cell made (approval questions), in order."""

    def stream(self, name: str = "stdout") -> str:
        return "".join(
            m["content"]["text"]
            for m in self.messages
            if m["msg_type"] == "stream" and m["content"]["name"] == name
        )

    def data(self, mime: str = "text/plain") -> list[Any]:
        """What each display of the cell holds in ``mime`` in the end, leaving out widget views.

        Updates and ``clear_output`` are applied (the kernel's start-up status is gone once the wait ends);
        ``shown_then`` has every display as it was first sent.
        """
        return [
            output["data"][mime]
            for output in self._folded()
            if mime in output.get("data", {}) and WIDGET_MIME not in output["data"]
        ]

    def shown_then(self, mime: str = "text/plain") -> list[Any]:
        """Every display the cell sent, in ``mime``, as first sent (also those removed or updated later)."""
        return [
            m["content"]["data"][mime]
            for m in self.of_type("display_data", "execute_result")
            if mime in m["content"]["data"] and WIDGET_MIME not in m["content"]["data"]
        ]

    def outputs(self) -> list[dict[str, Any]]:
        """The cell's outputs as a notebook keeps (and saves) them once every message has arrived.

        As JupyterLab and nbclient do: each stream and display is an output, an ``update_display_data``
        replaces the data of the outputs with its display id, ``clear_output`` empties the list (with
        ``wait``, when the next output comes). Streams are not merged.
        """
        return self._folded()

    def _folded(self) -> list[dict[str, Any]]:
        """The outputs, each display's updates and every ``clear_output`` applied."""
        outputs: list[dict[str, Any]] = []
        by_display: dict[str, list[int]] = {}
        clear_on_next = False
        kinds = ("stream", "display_data", "update_display_data", "execute_result", "clear_output")
        for message in self.of_type(*kinds):
            kind, content = message["msg_type"], message["content"]
            if kind == "clear_output" or (clear_on_next and kind != "update_display_data"):
                clear_on_next = kind == "clear_output" and content.get("wait", False)
                if not clear_on_next:
                    outputs, by_display = [], {}
                if kind == "clear_output":
                    continue
            display_id = (content.get("transient") or {}).get("display_id")
            if kind == "update_display_data":
                for index in by_display.get(display_id, []):
                    outputs[index] = {**outputs[index], **_shown(content)}
                continue
            if display_id:
                by_display.setdefault(display_id, []).append(len(outputs))
            if kind == "stream":
                outputs.append({"output_type": kind, "name": content["name"], "text": content["text"]})
            else:
                outputs.append({"output_type": kind, **_shown(content)})
        return outputs

    def of_type(self, *msg_types: str) -> list[dict[str, Any]]:
        """The cell's messages of these types, in the order they came."""
        return [m for m in self.messages if m["msg_type"] in msg_types]


def _shown(content: dict[str, Any]) -> dict[str, Any]:
    return {"data": content["data"], "metadata": content["metadata"]}


class Kernel:
    def __init__(self, manager: KernelManager, client: BlockingKernelClient) -> None:
        self.manager = manager
        self.client = client

    def run(
        self, code: str, timeout: float = 60, *, answers: Sequence[str] = (), allow_stdin: bool = True
    ) -> Reply:
        """Run a cell; input requests (an approval question) get ``answers`` in order, then "" (deny).

        The questions asked are in ``Reply.questions``. ``allow_stdin=False`` asks as nbclient and nbval
        do (nobody there to answer).
        """
        messages: list[dict[str, Any]] = []
        questions: list[str] = []
        left = list(answers)

        def answer(message: dict[str, Any]) -> None:
            questions.append(message["content"]["prompt"])
            self.client.input(left.pop(0) if left else "")

        started = time.monotonic()
        reply = self.client.execute_interactive(
            code,
            timeout=timeout,
            output_hook=lambda m: messages.append({**m, "at": time.monotonic()}),
            stdin_hook=answer,
            allow_stdin=allow_stdin,
        )
        content = reply["content"]
        return Reply(content["status"], content, messages, time.monotonic() - started, questions)


def shell_reply(kernel: Kernel, msg_id: str, timeout: float = 30) -> dict[str, Any]:
    """The shell channel's reply to ``msg_id`` (earlier replies, if any, are passed over)."""
    while True:
        reply: dict[str, Any] = kernel.client.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


def wait_for_printed(client: BlockingKernelClient, msg_id: str, printed: str, timeout: float = 60) -> None:
    """Wait until the cell ``msg_id`` has shown ``printed`` on stdout: what a person sees before pressing
    stop. Its other messages, and other cells', are passed over."""
    deadline = time.monotonic() + timeout
    text = ""
    while printed not in text:
        left = deadline - time.monotonic()
        assert left > 0, f"{printed!r} never printed; got {text!r}"
        msg = client.get_iopub_msg(timeout=left)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream":
            text += msg["content"]["text"]


def run_and_interrupt(
    kernel: Kernel, code: str, started: str, *, pause: float = 0.0
) -> tuple[dict[str, Any], float]:
    """Run ``code``, interrupt it once it printed ``started`` (and ``pause`` seconds passed); the execute
    reply's content and how long it came after the interrupt. Returns once the kernel is idle again.

    ipykernel 7 sends the reply of a cell that failed before it starts discarding the requests queued
    behind it (``stop_on_error``), so a next cell sent as soon as the reply came could be aborted (seen:
    ``{'status': 'aborted'}``, no output); once the cell's ``idle`` status has come, it is not.
    """
    msg_id = kernel.client.execute(code)
    wait_for_printed(kernel.client, msg_id, started)
    if pause:
        time.sleep(pause)
    kernel.manager.interrupt_kernel()  # from this thread: jupyter_core's run_sync keeps a loop per thread
    interrupted = time.monotonic()
    reply = shell_reply(kernel, msg_id)
    delay = time.monotonic() - interrupted
    wait_for_idle(kernel.client, msg_id)
    return reply["content"], delay


def wait_for_idle(client: BlockingKernelClient, msg_id: str, timeout: float = 30) -> None:
    """Wait for the kernel's ``idle`` status after the request ``msg_id`` (other iopub messages pass)."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f"the kernel never said it was idle after {msg_id}"
        msg = client.get_iopub_msg(timeout=left)
        parent = msg["parent_header"].get("msg_id")
        if parent == msg_id and msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return


_PORT_ATTEMPTS = 3


def start_kernel(
    jupyter_path: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch, *, connection_file: Path | None = None
) -> Kernel:
    """A kernel in ``cwd``; ``connection_file`` names its connection file (jupyter_server's
    ``kernel-<id>.json``), else jupyter_client makes a temporary one."""
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
    for attempt in range(_PORT_ATTEMPTS):
        manager = KernelManager(kernel_name="codemode")
        if connection_file is not None:
            manager.connection_file = str(connection_file)
        manager.start_kernel(cwd=str(cwd))
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=60)
        except RuntimeError:
            # jupyter_client picks free ports, writes them down, and the kernel binds them a moment later:
            # another process of a busy test run (a Ray node starts dozens) may take one in between, and the
            # kernel dies with "Address already in use". A kernel that dies for its own reasons dies again.
            client.stop_channels()
            alive = manager.is_alive()
            manager.shutdown_kernel(now=True)
            manager.cleanup_connection_file()
            if alive or attempt == _PORT_ATTEMPTS - 1:
                raise
            continue
        return Kernel(manager, client)
    raise AssertionError("unreachable")


@contextmanager
def configured_kernel(
    jupyter_path: Path, cwd: Path, config: Path, *, now: bool = False, connection_file: Path | None = None
) -> Iterator[Kernel]:
    """A kernel started in ``cwd`` with the config ``config`` (CODEMODE_CONFIG); shut down on leaving.

    ``now=True`` kills it instead of asking it to stop (a kernel beside a hung server would wait for it).
    """
    env = {"CODEMODE_CONFIG": str(config)}
    with kernel_in(jupyter_path, cwd, env, now=now, connection_file=connection_file) as kernel:
        yield kernel


@contextmanager
def kernel_in(
    jupyter_path: Path,
    cwd: Path,
    env: Mapping[str, str | None],
    *,
    now: bool = False,
    connection_file: Path | None = None,
) -> Iterator[Kernel]:
    """A kernel started in ``cwd`` with ``env`` set in its environment (None: unset); shut down on leaving."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name, value in env.items():
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
        kernel = start_kernel(jupyter_path, cwd, monkeypatch, connection_file=connection_file)
    try:
        yield kernel
    finally:
        kernel.client.stop_channels()
        kernel.manager.shutdown_kernel(now=now)


@contextmanager
def memory_kernel(
    jupyter_path: Path, notebook: Path, memory_server_bin: str, model_url: str
) -> Iterator[Kernel]:
    """A kernel in ``notebook`` with npm server-memory (its graph in the notebook's folder), the demo weather
    server and the scripted model ``scripted`` at ``model_url``: the approval tests' setting."""
    memory = {
        "command": memory_server_bin,
        "env": {"MEMORY_FILE_PATH": str(notebook / "memory.jsonl")},
        "timeout": 4,
    }
    config = {
        "mcpServers": {
            "memory": memory,
            "weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]},
        },
        "workspace": str(notebook),
        "models": [{"ref": "scripted", "provider": "openai", "model": "scripted", "baseUrl": model_url}],
    }
    (notebook / "codemode.json").write_text(json.dumps(config))
    with configured_kernel(jupyter_path, notebook, notebook / "codemode.json") as kernel:
        yield kernel


def state_path(connection_file: Path) -> Path:
    """The kernel's state file (``codemode-<id>.json``) beside its connection file ``kernel-<id>.json``."""
    kernel_id = connection_file.name.removeprefix("kernel-").removesuffix(".json")
    return connection_file.parent / f"codemode-{kernel_id}.json"


def wait_for_state(
    path: Path, until: Callable[[dict[str, Any]], bool], timeout: float = 30
) -> dict[str, Any]:
    """The state file once ``until`` holds for it (it is rewritten as servers connect)."""
    deadline = time.monotonic() + timeout
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            state = json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
            state = {}
        if state and until(state):
            return state
        time.sleep(0.1)
    raise AssertionError(f"the state file {path} never became as expected; last: {state}")
