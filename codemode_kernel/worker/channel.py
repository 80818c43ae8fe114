"""The worker's end of the channel: tool calls and artifact requests out, answers back, matched by id.

Whoever waits reads (leader/follower): a thread blocked on its own answer reads the socket itself when no
other thread is reading, and hands every frame that is not its answer to the thread that waits for it. A
call from a program then costs no thread switch: the answer wakes the caller, not a reader thread that
wakes the caller. Threads that wait while another reads (``parallel``) are handed their answers, and when
the reader has its own answer it passes the reading on to one of them. Requests nobody blocks on (the async
twins, calls whose progress is watched) are read by a background thread, which reads only while such a
request is pending and no blocked caller can read instead. The main thread reads between runs too
(``next_message``), so a run frame reaches it without a thread switch either.

A request still unanswered when its run ends never will be: the kernel drops what a run leaves when the
run ends. When the next run begins, such requests (a thread the program left behind waits for one) fail
with ``ChannelClosed``, so that no thread waits, and reads for everyone, for an answer that cannot come.

The worker holds no MCP connection and cannot open the artifact store: the kernel does both.
"""

from __future__ import annotations

import importlib
import itertools
import select
import socket
import threading
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..core import errors
from ..core.errors import ChannelClosed
from ..core.progress import ProgressHandler, ToolProgress, loop_reporter, wait_reporting
from ..core.records import ArtifactMetadata, RequestError, ValueEnvelope
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

if TYPE_CHECKING:  # loaded by the programs that use futures (async, progress): not by every worker
    from concurrent.futures import Future

__all__ = ["CallOrder", "Channel", "ChannelClosed"]

_signal = importlib.import_module("_signal")
"""The C functions under ``signal``'s: its wrappers turn every handler into an enum and back, which costs
more than the rest of reading a frame (the main thread swaps its SIGINT handler around each frame)."""

_ANSWERS = ("tool_result", "artifact_result")
_DROPPED: dict[str, Any] = {"type": "dropped"}
"""What a blocked request whose run ended unanswered is settled with."""
_DROPPED_REASON = "the run that made this request ended before the kernel answered it"
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


class _Waiter:
    """A thread blocked on one frame (an answer, or the next run): given the frame, or the turn to read.

    ``wake`` is held until then: releasing it wakes the thread (a lock is the cheapest wake-up there is).
    """

    __slots__ = ("done", "following", "frame", "leads", "wake")

    def __init__(self) -> None:
        self.wake = threading.Lock()
        self.wake.acquire()
        self.frame: dict[str, Any] | None = None
        self.done = False
        """The frame came, or the channel closed (``frame`` None)."""
        self.following = False
        """Asleep on ``wake`` while another thread reads."""
        self.leads = False
        """Reads the socket now: it found nobody reading, or the thread that read handed it on."""


class Channel:
    """Send frames to the kernel and await answers to tool calls."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._reader = FrameReader(sock)
        self._readable = select.poll()
        self._readable.register(sock.fileno(), select.POLLIN)
        self._ids = itertools.count(1)
        self._pending: dict[int, _Waiter | Future[Any]] = {}
        """Every request sent and not answered yet: its blocked caller, or a future nobody blocks on."""
        self._unattended = 0
        """How many of the pending requests are futures: while there are any, somebody must read."""
        self._watched: dict[int, Callable[[ToolProgress], None]] = {}
        """The calls whose progress the program watches: where each one's updates go, by request id."""
        self._lock = threading.Lock()
        self._reading = False
        """One thread at a time reads the socket (a caller, the main thread between runs, or the
        background thread)."""
        self._followers: deque[_Waiter] = deque()
        self._messages: deque[dict[str, Any]] = deque()
        """Frames that are not answers (a session's next ``run``), until the main thread takes them."""
        self._message_waiter: _Waiter | None = None
        self._background_wanted = threading.Condition(self._lock)
        self._closed = False
        self._interrupted = False
        self._run_ended = 0
        """Requests with a lower id were made before the program's last ``done``."""
        self.order = CallOrder()

    def send(self, message: WorkerFrame) -> None:
        """Send one frame (thread-safe)."""
        if message["type"] == "done":
            with self._lock:
                self._run_ended = next(self._ids)
        send_frame(self.sock, message)

    def start_reader(self) -> None:
        """Start the background thread that reads for the requests nobody blocks on.

        Started ahead, while the worker waits for its program: starting a thread takes a while.
        """
        threading.Thread(target=self._read_for_futures, name="codemode-channel", daemon=True).start()

    def next_message(self) -> dict[str, Any] | None:
        """Block until the kernel's next frame that is no answer (a ``run``); None once it closed."""
        waiter = _Waiter()
        with self._lock:
            if self._messages:
                return self._messages.popleft()
            if self._closed:
                return None
            self._message_waiter = waiter
        self._wait(waiter)  # interrupted, it stops waiting for the run (``_leave``)
        return waiter.frame

    def call(
        self, server: str, tool: str, arguments: dict[str, Any], on_progress: ProgressHandler | None = None
    ) -> dict[str, Any]:
        """Ask the kernel to run a tool; block until its wire result arrives.

        ``on_progress`` runs on this thread for each of the server's progress notifications on the call.
        """
        if on_progress is None:
            seq = self.order.take()
            result: dict[str, Any] = self._ask(
                lambda call_id: ToolCallFrame(
                    type="tool_call", id=call_id, server=server, tool=tool, arguments=arguments, seq=seq
                )
            )
            return result
        result = wait_reporting(
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

        ``report`` is called with each progress update, until the answer, on whichever thread reads.
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
        metadata: ArtifactMetadata = self._ask(
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
        return metadata

    def get_artifact(self, key: str) -> ValueEnvelope:
        """The envelope of an artifact's value, by id or name; block until the kernel answers."""
        envelope: ValueEnvelope = self._ask(
            lambda request_id: ArtifactGetFrame(type="artifact", id=request_id, op="get", key=key)
        )
        return envelope

    def list_artifacts(self) -> list[ArtifactMetadata]:
        """Every artifact's metadata, newest first; block until the kernel answers."""
        listed: list[ArtifactMetadata] = self._ask(
            lambda request_id: ArtifactListFrame(type="artifact", id=request_id, op="list")
        )
        return listed

    def request(self, frame: Callable[[int], ToolCallFrame | ArtifactFrame]) -> Future[Any]:
        """Send the request ``frame(id)`` makes with a fresh id; the future resolves to its answer's result.

        The answer's error (``ok: false``) is raised from the future instead. Nobody blocks on the
        future here, so the background thread reads for it.
        """
        from concurrent.futures import Future  # only for the programs that use futures (see above)

        future: Future[Any] = Future()
        request_id = self._send_request(frame, future)
        future.add_done_callback(lambda _: self._forget_cancelled(request_id, future))
        return future

    def _ask(self, frame: Callable[[int], ToolCallFrame | ArtifactFrame]) -> Any:
        """Send the request ``frame(id)`` makes and block until its answer: its result, or its error raised.

        This thread reads the answer itself when no other thread is reading.
        """
        waiter = _Waiter()
        request_id = self._send_request(frame, waiter)
        try:
            self._wait(waiter)
        except BaseException:  # interrupted: the answer, when it comes, finds nobody and is dropped
            with self._lock:
                self._pending.pop(request_id, None)
            raise
        if waiter.frame is None:
            raise ChannelClosed("the kernel closed the channel during a tool call")
        if waiter.frame is _DROPPED:
            raise ChannelClosed(_DROPPED_REASON)
        return _outcome(cast(ToolResultFrame | ArtifactResultFrame, waiter.frame))

    def _send_request(
        self, frame: Callable[[int], ToolCallFrame | ArtifactFrame], slot: _Waiter | Future[Any]
    ) -> int:
        """Register ``slot`` under a fresh id and send ``frame(id)``; the id."""
        with self._lock:
            if self._closed:
                raise ChannelClosed("the kernel closed the channel; no more tool calls in this execution")
            request_id = next(self._ids)
            self._pending[request_id] = slot
            if not isinstance(slot, _Waiter):
                self._unattended += 1
                self._background_wanted.notify()
        try:
            self.send(frame(request_id))
        except BaseException:  # too large to send, or the socket is gone: nobody will answer it
            with self._lock:
                self._forget(request_id)
            raise
        return request_id

    def _forget(self, request_id: int) -> _Waiter | Future[Any] | None:
        """Take a request out of the pending ones (the lock held)."""
        slot = self._pending.pop(request_id, None)
        self._watched.pop(request_id, None)
        if slot is not None and not isinstance(slot, _Waiter):
            self._unattended -= 1
        return slot

    def _forget_cancelled(self, request_id: int, future: Future[Any]) -> None:
        """A future the program gave up on (a cancelled task) needs no reading any more."""
        if future.cancelled():
            with self._lock:
                if self._pending.get(request_id) is future:
                    self._forget(request_id)

    # -- reading: whoever waits reads ---------------------------------------------------------------------

    def _wait(self, waiter: _Waiter) -> None:
        """Block until ``waiter`` has its frame: read the socket when nobody else does, else sleep.

        An interrupt (the main thread) can strike anywhere in here: wherever it does, the reading is never
        lost with the thread that held it. Taking a frame and handing the reading on hold SIGINT back;
        whatever an interrupt leaves elsewhere, ``_leave`` puts right, with SIGINT held back too.
        """
        try:
            with self._lock:
                if waiter.done:
                    return
                if self._reading:
                    waiter.following = True
                    self._followers.append(waiter)
                else:  # leads first: an interrupt between the two finds it leading, and passes the reading on
                    waiter.leads = True
                    self._reading = True
            if not waiter.leads:
                waiter.wake.acquire()  # until the frame comes, or the reading is handed over
            while waiter.leads:
                self._lead(waiter)
        finally:
            if waiter.leads or waiter.following or not waiter.done:  # interrupted (see _leave)
                self._uninterrupted(self._leave, waiter)

    def _lead(self, waiter: _Waiter) -> None:
        """Read one frame as ``waiter``'s thread; once its own has come, pass the reading on."""
        if threading.get_ident() != threading.main_thread().ident:
            self._take_for(waiter)
            return
        if not waiter.done:
            self._readable.poll()  # the main thread waits for the frame interruptibly, then takes it whole
        self._holding_interrupts(self._take_for, waiter)

    def _take_for(self, waiter: _Waiter) -> None:
        if not waiter.done and self._take_frame() and not waiter.done:
            return
        with self._lock:  # its own frame came, or the channel closed (which settles every waiter)
            waiter.leads = False
            self._pass_reading()

    def _leave(self, waiter: _Waiter) -> None:
        """After an interrupted wait: out of the line, the reading passed on, no longer waiting for a run."""
        with self._lock:
            if waiter.following:
                waiter.following = False
                self._followers.remove(waiter)
            if waiter.leads:
                waiter.leads = False
                self._pass_reading()
            if self._message_waiter is waiter:
                self._message_waiter = None

    def _uninterrupted(self, step: Callable[[_Waiter], None], waiter: _Waiter) -> None:
        """``step(waiter)``, on the main thread with SIGINT held back (``_holding_interrupts``)."""
        if threading.get_ident() != threading.main_thread().ident:
            step(waiter)
        else:
            self._holding_interrupts(step, waiter)

    def _holding_interrupts(self, step: Callable[[_Waiter], None], waiter: _Waiter) -> None:
        """``step(waiter)`` on the main thread, where an interrupt (SIGINT) raises, with SIGINT held back.

        Taking a frame, or handing the reading on, is never left halfway: a KeyboardInterrupt halfway
        through a frame would lose the rest of the stream, and one between taking the next reader out of
        the line and waking it would leave nobody reading. A SIGINT that came meanwhile is raised after.
        """
        previous = _signal.getsignal(_signal.SIGINT)
        if previous is None:  # a handler from outside Python, which could not be put back
            step(waiter)
            return
        _signal.signal(_signal.SIGINT, self._defer_interrupt)
        try:
            step(waiter)
        finally:
            interrupted, self._interrupted = self._interrupted, False
            _signal.signal(_signal.SIGINT, previous)
            if interrupted:
                _signal.raise_signal(_signal.SIGINT)  # to the program's own handler, now the step is done

    def _defer_interrupt(self, _signum: int, _frame: object) -> None:
        self._interrupted = True

    def _pass_reading(self) -> None:
        """The reading thread is done (the lock held): wake a blocked caller to read, else the background."""
        if self._followers and not self._closed:
            successor = self._followers.popleft()
            successor.leads = True  # before following ends: a glance without the lock sees one or the other
            successor.following = False
            successor.wake.release()
            return
        self._reading = False
        if self._unattended:
            self._background_wanted.notify()

    def _read_for_futures(self) -> None:
        """The background thread: read while requests nobody blocks on are pending and nobody else reads."""
        while True:
            with self._lock:
                while not self._closed and (self._reading or not self._unattended):
                    self._background_wanted.wait()
                if self._closed:
                    return
                self._reading = True
            try:
                while self._take_frame():
                    with self._lock:
                        if self._followers or not self._unattended:
                            break  # a blocked caller reads on (no thread switch), or nobody needs to
            finally:
                with self._lock:
                    self._pass_reading()

    def _take_frame(self) -> bool:
        try:
            message = self._reader.read()
        except (OSError, ProtocolError):
            message = None
        if message is None:
            self._close()
            return False
        try:
            self._dispatch(message)
        except Exception:  # one frame the program's state could not take: the next ones still
            import traceback  # loaded only when something went wrong

            traceback.print_exc()
        return True

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "tool_progress":
            self._progress(cast(ToolProgressFrame, message))
            return
        if kind not in _ANSWERS:
            with self._lock:
                waiter, self._message_waiter = self._message_waiter, None
                if waiter is None:
                    self._messages.append(message)
                else:
                    self._settle(waiter, message)
                dropped = self._drop_ended_runs() if kind == "run" else []
            for future in dropped:
                future.set_exception(ChannelClosed(_DROPPED_REASON))
            return
        answer = cast(ToolResultFrame | ArtifactResultFrame, message)  # the kernel is trusted here
        with self._lock:
            slot = self._forget(int(answer.get("id", -1)))
            if isinstance(slot, _Waiter):
                self._settle(slot, message)
                return
        if slot is None or slot.done():  # the program gave up on it (a cancelled task)
            return
        try:
            result = _outcome(answer)
        except Exception as exc:
            slot.set_exception(exc)
        else:
            slot.set_result(result)

    def _drop_ended_runs(self) -> list[Future[Any]]:
        """A run begins (the lock held): the requests made before the last ``done`` will not be answered.

        The kernel answers nothing of a run after the run ended, and sends the next ``run`` only then: by
        now every answer to those requests has been read. Their blocked callers are settled here (and leave
        the reading, if they held it); their futures are returned, to be failed without the lock.
        """
        futures: list[Future[Any]] = []
        for request_id in [request_id for request_id in self._pending if request_id < self._run_ended]:
            slot = self._forget(request_id)
            if isinstance(slot, _Waiter):
                self._settle(slot, _DROPPED)
            elif slot is not None and not slot.done():
                futures.append(slot)
        return futures

    def _progress(self, frame: ToolProgressFrame) -> None:
        with self._lock:
            report = self._watched.get(int(frame.get("id", -1)))
        if report is not None:
            report(ToolProgress(frame["progress"], frame.get("total"), frame.get("message")))

    def _settle(self, waiter: _Waiter, frame: dict[str, Any] | None) -> None:
        """Give ``waiter`` its frame (the lock held); wake its thread if it sleeps."""
        waiter.frame = frame
        waiter.done = True
        if waiter.following:
            waiter.following = False
            self._followers.remove(waiter)
            waiter.wake.release()

    def _close(self) -> None:
        """The kernel closed the channel: every waiting caller is told, and nothing more is read."""
        with self._lock:
            self._closed = True
            self._watched.clear()
            pending, self._pending = self._pending, {}
            self._unattended = 0
            for slot in pending.values():
                if isinstance(slot, _Waiter):
                    self._settle(slot, None)
            if self._message_waiter is not None:
                self._settle(self._message_waiter, None)
                self._message_waiter = None
            self._background_wanted.notify_all()
        for slot in pending.values():
            if not isinstance(slot, _Waiter) and not slot.done():
                slot.set_exception(ChannelClosed("the kernel closed the channel during a tool call"))


def _outcome(answer: ToolResultFrame | ArtifactResultFrame) -> Any:
    """An answer's result; its error (``ok: false``) is raised."""
    if not answer.get("ok"):
        error: Any = answer.get("error")
        raise _error_from(error or {})
    result = answer.get("result")
    if answer["type"] == "tool_result":
        result = result or {}
    return result


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
