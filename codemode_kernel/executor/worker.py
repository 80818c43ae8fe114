"""A worker: runs one program in a freshly forked process and reports back over the channel.

The program's globals hold the tool functions (also importable: ``from tools import get_weather``),
``tools``, ``atools``, ``parallel``, ``search_tools``, ``tool_schema``, the errors a tool call raises
(``ToolError``, ``ToolArgumentError``, ``ToolTimeoutError``, ``CodeModeError``) and the inputs. ``print`` and
``sys.stderr`` stream to the kernel as frames while the program runs.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import sys
import threading
import types
from typing import Any

from .. import errors
from .channel import Channel
from .source import CodeSyntaxError, PreparedCode, error_record, prepare, run_prepared
from .toolset import HELPER_NAMES
from .values import decode_inputs, encode_value

__all__ = ["run_one"]

_FLUSH_BYTES = 8192


class StreamToChannel(io.TextIOBase):
    """A text stream whose writes become ``stdout``/``stderr`` frames (line-buffered, thread-safe)."""

    def __init__(self, channel: Channel, name: str) -> None:
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
            self._channel.send({"type": self._name, "data": data})

    def isatty(self) -> bool:
        return False


def program_globals(tools_module: types.ModuleType, inputs: dict[str, Any]) -> dict[str, Any]:
    """The namespace a program starts with: tools by bare name, the helpers, then the inputs."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins, "tools": tools_module}
    for name in getattr(tools_module, "__all__", []):
        namespace[name] = getattr(tools_module, name)
    for name in HELPER_NAMES:
        namespace[name] = getattr(tools_module, name)
    # The errors a tool call raises, so `except ToolError:` works without an import.
    for error in (errors.ToolError, errors.ToolArgumentError, errors.ToolTimeoutError, errors.CodeModeError):
        namespace[error.__name__] = error
    namespace.update(inputs)
    return namespace


def run_one(channel: Channel, tools_module: types.ModuleType) -> None:
    """Serve one ``run`` request on ``channel``, then return (the caller exits the process)."""
    request = channel.read()
    if request is None or request.get("type") != "run":
        return
    channel.start_reader()
    stdout, stderr = StreamToChannel(channel, "stdout"), StreamToChannel(channel, "stderr")
    sys.stdout, sys.stderr = stdout, stderr  # type: ignore[assignment]
    done: dict[str, Any]
    prepared: PreparedCode | None = None
    try:
        inputs = decode_inputs(request.get("inputs") or {})
        prepared = prepare(str(request.get("code", "")), filename=str(request.get("filename") or "<code>"))
        value = run_prepared(prepared, program_globals(tools_module, inputs))
        done = {"type": "done", "status": "ok", "value": encode_value(value), "error": None}
    except CodeSyntaxError as exc:
        done = {"type": "done", "status": "error", "value": None, "error": exc.error}
    except SystemExit as exc:
        if exc.code in (None, 0):
            done = {"type": "done", "status": "ok", "value": None, "error": None}
        else:
            done = {"type": "done", "status": "error", "value": None, "error": error_record(exc, prepared)}
    except BaseException as exc:  # KeyboardInterrupt at the deadline included: the runner says timeout
        done = {"type": "done", "status": "error", "value": None, "error": error_record(exc, prepared)}
    stdout.flush()
    stderr.flush()
    channel.send(done)
