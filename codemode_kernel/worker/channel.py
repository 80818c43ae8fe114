"""The worker's end of the channel: tool calls and artifact requests out, answers back, matched by id.

One reader thread receives every frame and hands each ``tool_result`` or ``artifact_result`` to the
caller waiting for it, so requests from threads (``parallel``) and from asyncio tasks (the async twins)
can all be in flight at once over one socket. The worker holds no MCP connection and cannot open the
artifact store: the kernel does both.
"""

from __future__ import annotations

import itertools
import socket
import sys
import threading
import traceback
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any, cast

from ..core import errors
from ..core.errors import ChannelClosed
from ..core.progress import ProgressHandler, ToolProgress, loop_reporter, wait_reporting
from .protocol import (
    ArtifactFrame,
    ArtifactGetFrame,
    ArtifactListFrame,
    ArtifactResultFrame,
    ArtifactStoreFrame,
    FrameReader,
    ProtocolError,
    ToolCallFrame,
    ToolProgressFrame,
    ToolResultFrame,
    WorkerFrame,
    send_frame,
)
from .records import ArtifactMetadata, RequestError, ValueEnvelope

__all__ = ["CallOrder", "Channel", "ChannelClosed"]

_ANSWERS = ("tool_result", "artifact_result")
_ERRORS: dict[str, type[errors.CodeModeError]] = {
    "ArtifactError": errors.ArtifactError,
    "ArtifactNotFoundError": errors.ArtifactNotFoundError,
    "ToolArgumentError": errors.ToolArgumentError,
    "ToolTimeoutError": errors.ToolTimeoutError,
    "UnknownToolError": errors.UnknownToolError,
    "ServerError": errors.ServerError,
    "ToolError": errors.ToolError,
    "LLMError": errors.LLMError,
    "LLMAuthError": errors.LLMAuthError,
    "LLMModelNotFoundError": errors.LLMModelNotFoundError,
    "LLMUnreachableError": errors.LLMUnreachableError,
}


class CallOrder:
    """Numbers a run's tool calls 1, 2, ... in the order the program issues them.

    Threads race to the socket, so the order frames arrive in is not the program's. ``parallel`` reserves a
    block of numbers for its batch up front and hands slot ``i`` the ``i``-th, so a batch is numbered in
    submission order however its threads are scheduled; calls made one after another are numbered as made.
    """

    def __init__(self) -> None:
        self._next = 1
        self._lock = threading.Lock()
        self._reserved = threading.local()

    def restart(self) -> None:
        """Number the next run's calls from 1 again (a session serves several runs)."""
        with self._lock:
            self._next = 1

    def reserve(self, count: int) -> int:
        """Set aside ``count`` consecutive numbers; returns the first."""
        with self._lock:
            first = self._next
            self._next += count
            return first

    def hand(self, number: int | None) -> None:
        """Give this thread's next call the reserved ``number`` (None: take the next free one)."""
        self._reserved.number = number

    def take(self) -> int:
        """The number of a call being issued now, on this thread."""
        number: int | None = getattr(self._reserved, "number", None)
        if number is not None:
            self._reserved.number = None
            return number
        return self.reserve(1)


class Channel:
    """Send frames to the kernel and await answers to tool calls."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._reader = FrameReader(sock)
        self._ids = itertools.count(1)
        self._pending: dict[int, Future[Any]] = {}
        self._watched: dict[int, Callable[[ToolProgress], None]] = {}
        """The calls whose progress the program watches: where each one's updates go, by request id."""
        self._lock = threading.Lock()
        self._closed = False
        self.order = CallOrder()
        self.on_message: Callable[[dict[str, Any]], None] | None = None
        self.on_close: Callable[[], None] | None = None

    def send(self, message: WorkerFrame) -> None:
        """Send one frame (thread-safe)."""
        send_frame(self.sock, message)

    def read(self) -> dict[str, Any] | None:
        """Read one frame directly (only before the reader thread starts)."""
        return self._reader.read()

    def start_reader(self, after: threading.Event | None = None) -> None:
        """Dispatch incoming frames on a daemon thread: from now on, or once ``after`` is set.

        Starting a thread takes a while; with ``after`` it is started ahead and reads only once the caller
        has read what it wants to read itself (``read``).
        """

        def read_loop() -> None:
            if after is not None:
                after.wait()
            self._read_loop()

        threading.Thread(target=read_loop, name="codemode-channel", daemon=True).start()

    def call(
        self, server: str, tool: str, arguments: dict[str, Any], on_progress: ProgressHandler | None = None
    ) -> dict[str, Any]:
        """Ask the kernel to run a tool; block until its wire result arrives.

        ``on_progress`` runs on this thread for each of the server's progress notifications on the call.
        """
        if on_progress is None:
            return self.submit(server, tool, arguments).result()
        result: dict[str, Any] = wait_reporting(
            tool, lambda report: self.submit(server, tool, arguments, report), on_progress
        )
        return result

    async def acall(
        self, server: str, tool: str, arguments: dict[str, Any], on_progress: ProgressHandler | None = None
    ) -> dict[str, Any]:
        """Async twin of ``call``; ``on_progress`` runs on the awaiting loop."""
        import asyncio  # loaded by the program that awaits: a worker does not import it up front

        report = None
        if on_progress is not None:
            report = loop_reporter(asyncio.get_running_loop(), tool, on_progress)
        return await asyncio.wrap_future(self.submit(server, tool, arguments, report))

    def submit(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        report: Callable[[ToolProgress], None] | None = None,
    ) -> Future[dict[str, Any]]:
        """Send a tool call; the future resolves to the result or raises the kernel's error.

        ``report`` is called on the reader thread with each progress update, until the answer.
        """
        seq = self.order.take()

        def frame(call_id: int) -> ToolCallFrame:
            call = ToolCallFrame(
                type="tool_call", id=call_id, server=server, tool=tool, arguments=arguments, seq=seq
            )
            if report is not None:
                call["progress"] = True
                self._watched[call_id] = report
            return call

        return self.request(frame)

    def store_artifact(
        self, value: ValueEnvelope, name: str | None, description: str | None, mime_type: str | None
    ) -> ArtifactMetadata:
        """Keep a value in the kernel's artifact store; block until it answers with the new metadata."""
        answer = self.request(
            lambda request_id: ArtifactStoreFrame(
                type="artifact",
                id=request_id,
                op="store",
                value=value,
                name=name,
                description=description,
                mime_type=mime_type,
            )
        )
        metadata: ArtifactMetadata = answer.result()
        return metadata

    def get_artifact(self, key: str) -> ValueEnvelope:
        """The envelope of an artifact's value, by id or name; block until the kernel answers."""
        answer = self.request(
            lambda request_id: ArtifactGetFrame(type="artifact", id=request_id, op="get", key=key)
        )
        envelope: ValueEnvelope = answer.result()
        return envelope

    def list_artifacts(self) -> list[ArtifactMetadata]:
        """Every artifact's metadata, newest first; block until the kernel answers."""
        answer = self.request(lambda request_id: ArtifactListFrame(type="artifact", id=request_id, op="list"))
        listed: list[ArtifactMetadata] = answer.result()
        return listed

    def request(self, frame: Callable[[int], ToolCallFrame | ArtifactFrame]) -> Future[Any]:
        """Send the request ``frame(id)`` makes with a fresh id; the future resolves to its answer's result.

        The answer's error (``ok: false``) is raised from the future instead.
        """
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                raise ChannelClosed("the kernel closed the channel; no more tool calls in this execution")
            request_id = next(self._ids)
            self._pending[request_id] = future
        try:
            self.send(frame(request_id))
        except BaseException:  # too large to send, or the socket is gone: nobody will answer it
            with self._lock:
                self._pending.pop(request_id, None)
                self._watched.pop(request_id, None)
            raise
        return future

    def _read_loop(self) -> None:
        try:
            while True:
                message = self._reader.read()
                if message is None:
                    break
                try:
                    self._dispatch(message)
                except Exception:  # one frame the program's state could not take: the next ones still
                    traceback.print_exc(file=sys.stderr)
        except (OSError, ProtocolError):
            pass
        self._close_pending()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if message.get("type") == "tool_progress":
            self._progress(cast(ToolProgressFrame, message))
            return
        if message.get("type") not in _ANSWERS:
            if self.on_message is not None:
                self.on_message(message)
            return
        answer = cast(ToolResultFrame | ArtifactResultFrame, message)  # the kernel is trusted here
        with self._lock:
            future = self._pending.pop(int(answer.get("id", -1)), None)
            self._watched.pop(int(answer.get("id", -1)), None)
        if future is None or future.done():  # the program gave up on it (a cancelled task)
            return
        if answer.get("ok"):
            result = answer.get("result")
            if answer["type"] == "tool_result":
                result = result or {}
            future.set_result(result)
        else:
            error: Any = answer.get("error")
            future.set_exception(_error_from(error or {}))

    def _progress(self, frame: ToolProgressFrame) -> None:
        with self._lock:
            report = self._watched.get(int(frame.get("id", -1)))
        if report is not None:
            report(ToolProgress(frame["progress"], frame.get("total"), frame.get("message")))

    def _close_pending(self) -> None:
        with self._lock:
            self._closed = True
            self._watched.clear()
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(ChannelClosed("the kernel closed the channel during a tool call"))
        if self.on_close is not None:
            self.on_close()


def _error_from(data: RequestError | Mapping[str, Any]) -> Exception:
    """Rebuild the kernel's exception (by name, from a fixed list: never anything the data names freely)."""
    cls = _ERRORS.get(str(data.get("type")), errors.ServerError)
    message = str(data.get("message", "tool call failed"))
    tool = str(data.get("tool", ""))
    if cls is errors.ToolArgumentError:
        return errors.ToolArgumentError(message, tool=tool, field=data.get("field"))
    if cls is errors.ToolTimeoutError:
        return errors.ToolTimeoutError(message, tool=tool, timeout=float(data.get("timeout") or 0))
    if cls is errors.ToolError:
        return errors.ToolError(message, tool=tool, server=data.get("server"))
    if cls is errors.UnknownToolError:
        return errors.UnknownToolError(message)
    if cls is errors.ArtifactNotFoundError:
        return errors.ArtifactNotFoundError(message, key=str(data.get("key", "")))
    if cls is errors.ArtifactError:
        return errors.ArtifactError(message)
    if issubclass(cls, errors.LLMError):
        return cls(message)
    exc = errors.ServerError.__new__(errors.ServerError)
    Exception.__init__(exc, message)
    exc.server = str(data.get("server", ""))
    exc.log_path = None
    return exc
