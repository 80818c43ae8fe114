"""A worker: runs one program in a freshly forked process and reports back over the channel.

The program's globals hold the tool functions (also importable: ``from tools import get_weather``),
``tools``, ``atools``, ``parallel``, ``search_tools``, ``tool_schema``, ``store_artifact``,
``get_artifact``, ``list_artifacts``, the errors these raise (``ToolError``, ``ToolArgumentError``,
``ToolTimeoutError``, ``ArtifactError``, ``ArtifactNotFoundError``, ``CodeModeError``) and the inputs.
``print`` and ``sys.stderr`` stream to the kernel as frames while the program runs.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import sys
import threading
import types
from typing import Any, Literal, cast

from ..core import errors
from .channel import Channel
from .protocol import DoneFrame, OutputFrame, RunFrame
from .sandbox import kill_namespace
from .source import CodeSyntaxError, PreparedCode, error_record, prepare, remember_run, run_prepared
from .tools_module import HELPER_NAMES, ProgramComplete, ToolRuntime
from .values import decode_inputs, encode_value

__all__ = ["program_globals", "serve"]

_FLUSH_BYTES = 8192
_FRAME_CHARS = 1 << 20
"""Output travels in pieces of at most this many characters: one frame each, far below the frame limit
(a character takes at most 7 bytes as JSON), so a single huge write is cut by the kernel like any other."""
_PROGRAM_ERRORS = (
    errors.ToolError,
    errors.ToolArgumentError,
    errors.ToolTimeoutError,
    errors.ArtifactError,
    errors.ArtifactNotFoundError,
    errors.LLMError,
    errors.CodeModeError,
)


class StreamToChannel(io.TextIOBase):
    """A text stream whose writes become ``stdout``/``stderr`` frames (line-buffered, thread-safe)."""

    def __init__(self, channel: Channel, name: Literal["stdout", "stderr"]) -> None:
        self._channel = channel
        self._name = name
        self._buffer: list[str] = []
        self._size = 0
        self._lock = threading.Lock()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # read-only here, as on sys.stdout
        return "utf-8"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self._lock:
            self._buffer.append(text)
            self._size += len(text)
            if "\n" in text or self._size >= _FLUSH_BYTES:
                self._flush_locked()
        return len(text)

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if not self._buffer:
            return
        data = "".join(self._buffer)
        self._buffer, self._size = [], 0
        with contextlib.suppress(OSError):  # the kernel is gone: the output has nowhere to go
            for start in range(0, len(data), _FRAME_CHARS):
                self._channel.send(OutputFrame(type=self._name, data=data[start : start + _FRAME_CHARS]))

    def isatty(self) -> bool:
        return False


def program_globals(tools_module: types.ModuleType, inputs: dict[str, Any]) -> dict[str, Any]:
    """The namespace a program starts with: tools by bare name, the helpers, then the inputs."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins, "tools": tools_module}
    for name in getattr(tools_module, "__all__", []):
        namespace[name] = getattr(tools_module, name)
    for name in HELPER_NAMES:
        namespace[name] = getattr(tools_module, name)
    # The errors a tool call or an artifact request raises, so `except ToolError:` works without an import.
    for error in _PROGRAM_ERRORS:
        namespace[error.__name__] = error
    namespace.update(inputs)
    return namespace


def serve(channel: Channel, runtime: ToolRuntime) -> None:
    """Serve ``run`` requests on ``channel``: one, or, when the first says ``session``, until closed.

    A session keeps the program's globals from one run to the next; what a run started in the background
    (processes, when this is PID 1 of a namespace) is ended before the next run begins.
    """
    # Everything up to the wait is done before the program arrives (a prepared worker waits here), so a
    # run's start costs only what the program itself needs.
    channel.start_reader()
    stdout, stderr = StreamToChannel(channel, "stdout"), StreamToChannel(channel, "stderr")
    namespace: dict[str, Any] = program_globals(runtime.module, {})
    _warm_up()
    sys.stdout, sys.stderr = stdout, stderr  # type: ignore[assignment]
    # This thread reads its requests itself (the kernel sends run frames): no wake-up by another thread.
    first = channel.next_message()
    if first is None or first.get("type") != "run":
        return
    session = bool(first.get("session"))
    request: RunFrame | None = cast(RunFrame, first)
    while request is not None:
        channel.order.restart()
        _place_run_tools(runtime, request, namespace)
        channel.send(_run(request, namespace, stdout, stderr))
        if not session:
            # Exit when the kernel closes the channel, not now: it does so once the run's caller has its
            # result, so tearing this process down does not compete with the caller (or the next run). A
            # SIGINT meant for the finished program (a deadline that fell just then) ends the wait quietly.
            with contextlib.suppress(KeyboardInterrupt):
                channel.next_message()
            return
        _end_background_processes()
        request = cast(RunFrame | None, channel.next_message())


def _place_run_tools(runtime: ToolRuntime, request: RunFrame, namespace: dict[str, Any]) -> None:
    """Put the run's own tools (``RunFrame.tools``) in the program's globals, the last run's out."""
    runtime.shapes = request.get("shapes") or {}
    if not request.get("tools") and not runtime.run_tool_names:
        return
    for name in runtime.run_tool_names:
        if namespace.get(name) is getattr(runtime.module, name, None):
            del namespace[name]
    namespace.update(runtime.set_run_tools(request.get("tools") or []))


def _warm_up() -> None:
    """Take a trivial program through the path a real one takes, in a throwaway namespace.

    A forked worker shares the zygote's memory until it writes to it: the first parse, compile, run and
    encoding touch (and copy) pages, and create the caches, that every program needs. Done here, while
    the worker waits for its program, that costs the run nothing.
    """
    prepared = prepare("_ = [0]\n_")
    encode_value(run_prepared(prepared, {"__builtins__": builtins}))


def _run(
    request: RunFrame, namespace: dict[str, Any], stdout: StreamToChannel, stderr: StreamToChannel
) -> DoneFrame:
    """Run one program in ``namespace``; the ``done`` frame to send back."""
    done: DoneFrame
    prepared: PreparedCode | None = None
    try:
        namespace.update(decode_inputs(request.get("inputs") or {}))
        code, filename = str(request.get("code", "")), str(request.get("filename") or "<code>")
        prepared = prepare(code, filename=filename, defined=namespace)
        for note in prepared.notes:  # what was read beyond Python, so the author learns its spelling
            stderr.write(f"codemode: {note}\n")
        if request.get("session"):
            remember_run(prepared)
        value = run_prepared(prepared, namespace)
        done = DoneFrame(type="done", status="ok", value=encode_value(value), error=None)
    except ProgramComplete as ended:
        final = encode_value({"answer": ended.answer, "data": ended.data})
        done = DoneFrame(type="done", status="ok", value=final, error=None, completed=True)
    except CodeSyntaxError as exc:
        done = DoneFrame(type="done", status="error", value=None, error=error_record(exc, None))
    except SystemExit as exc:
        if exc.code in (None, 0):
            done = DoneFrame(type="done", status="ok", value=None, error=None)
        else:
            done = DoneFrame(type="done", status="error", value=None, error=error_record(exc, prepared))
    except BaseException as exc:  # KeyboardInterrupt at the deadline included: the runner says timeout
        done = DoneFrame(type="done", status="error", value=None, error=error_record(exc, prepared))
    stdout.flush()
    stderr.flush()
    return done


def _end_background_processes() -> None:
    """Between two runs of a session: no process one run started lives on into the next."""
    if os.getpid() == 1:
        with contextlib.suppress(RuntimeError):
            kill_namespace()
