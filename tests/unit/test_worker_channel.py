"""The worker's channel over a real socket, against a scripted kernel: whoever waits reads.

The kernel end is scripted (on a thread of the test) so that it can answer out of order, stop halfway
through a frame, or hang up at a chosen moment; the channel under test is the worker's own.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
import socket
import struct
import termios
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from codemode_kernel.core.errors import ChannelClosed
from codemode_kernel.core.progress import ToolProgress
from codemode_kernel.worker import channel as channel_module
from codemode_kernel.worker.channel import Channel
from codemode_kernel.worker.protocol import FrameReader, encode_frame


class Kernel:
    """The kernel's end of a socketpair: reads the worker's frames, answers as each test scripts."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = FrameReader(sock)

    def next_call(self) -> dict[str, Any]:
        frame = self.reader.read()
        assert frame is not None and frame["type"] == "tool_call", frame
        return frame

    def answer(self, call: dict[str, Any], **extra: Any) -> None:
        self.sock.sendall(self.answer_bytes(call, **extra))

    @staticmethod
    def answer_bytes(call: dict[str, Any], **extra: Any) -> bytes:
        """The frame answering ``call``: its own arguments back, so a mix-up shows."""
        result = {"structuredContent": {"echo": call["arguments"]}, **extra}
        return encode_frame({"type": "tool_result", "id": call["id"], "ok": True, "result": result})  # type: ignore[typeddict-item]

    def unread_bytes(self) -> int:
        """Bytes this end sent that the worker has not read yet (SIOCOUTQ)."""
        queued = fcntl.ioctl(self.sock.fileno(), termios.TIOCOUTQ, struct.pack("i", 0))
        return int(struct.unpack("i", queued)[0])


@pytest.fixture
def pair() -> Iterator[tuple[Channel, Kernel]]:
    ours, theirs = socket.socketpair()
    channel = Channel(ours)
    channel.start_reader()
    yield channel, Kernel(theirs)
    ours.close()
    theirs.close()


def in_thread(target: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    """Run ``target`` on a thread; the list gets its result or its exception."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(target())
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_answers_in_reverse_order_reach_the_threads_that_asked(pair: tuple[Channel, Kernel]) -> None:
    channel, kernel = pair
    callers = [in_thread(lambda n=n: channel.call("s", "echo", {"n": n})) for n in range(20)]
    calls = [kernel.next_call() for _ in callers]
    for call in reversed(calls):
        kernel.answer(call)
    for thread, _ in callers:
        thread.join(10)
    assert [outcome[0]["structuredContent"]["echo"]["n"] for _, outcome in callers] == list(range(20))


def test_sync_async_and_watched_calls_share_the_socket(pair: tuple[Channel, Kernel]) -> None:
    channel, kernel = pair
    updates: list[ToolProgress] = []
    watched = in_thread(lambda: channel.call("s", "watched", {"w": 1}, on_progress=updates.append))

    async def awaited() -> Any:
        return await channel.acall("s", "awaited", {"a": 1})

    awaiting = in_thread(lambda: asyncio.run(awaited()))
    blocked = in_thread(lambda: channel.call("s", "blocked", {"b": 1}))
    calls = {call["tool"]: call for call in (kernel.next_call() for _ in range(3))}
    kernel.sock.sendall(
        encode_frame(
            {
                "type": "tool_progress",
                "id": calls["watched"]["id"],
                "progress": 1,
                "total": 2,
                "message": "half",
            }  # type: ignore[typeddict-item]
        )
    )
    for name in ("blocked", "awaited", "watched"):
        kernel.answer(calls[name])
    for thread, _ in (watched, awaiting, blocked):
        thread.join(10)
    assert [o[0]["structuredContent"]["echo"] for _, o in (watched, awaiting, blocked)] == [
        {"w": 1},
        {"a": 1},
        {"b": 1},
    ]
    assert updates == [ToolProgress(1, 2, "half")]


def test_an_interrupt_halfway_through_a_frame_loses_no_byte_of_the_stream(
    pair: tuple[Channel, Kernel],
) -> None:
    """SIGINT while the main thread reads its own answer: the interrupt comes after the whole frame."""
    channel, kernel = pair

    class Interrupted(Exception):
        pass

    def interrupt(_signum: int, _frame: object) -> None:
        raise Interrupted

    main = threading.get_ident()

    def kernel_side() -> None:
        call = kernel.next_call()
        data = kernel.answer_bytes(call, padding="x" * 100_000)
        kernel.sock.sendall(data[:1000])
        deadline = time.monotonic() + 10
        while kernel.unread_bytes() and time.monotonic() < deadline:  # the worker is inside the frame
            time.sleep(0.001)
        signal.pthread_kill(main, signal.SIGINT)
        kernel.sock.sendall(data[1000:])
        kernel.answer(kernel.next_call())

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        scripted, failed = in_thread(kernel_side)
        with pytest.raises(Interrupted):
            channel.call("s", "big", {"n": 1})
        assert channel.call("s", "next", {"n": 2})["structuredContent"]["echo"] == {"n": 2}
    finally:
        signal.signal(signal.SIGINT, previous)
    scripted.join(10)
    assert not failed or failed == [None]


def test_an_interrupted_caller_hands_the_reading_on(pair: tuple[Channel, Kernel]) -> None:
    """The main thread reads for a waiting thread and is interrupted: the thread still gets its answer."""
    channel, kernel = pair
    first = channel.call  # the main thread will lead: it asks before the thread does

    class Interrupted(Exception):
        pass

    def interrupt(_signum: int, _frame: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGINT, interrupt)
    main = threading.get_ident()
    try:

        def kernel_side() -> None:
            mine = kernel.next_call()
            other = in_thread(lambda: channel.call("s", "other", {"o": 1}))
            theirs = kernel.next_call()
            signal.pthread_kill(main, signal.SIGINT)
            kernel.answer(theirs)
            other[0].join(10)
            results.append(other[1])
            kernel.answer(mine)  # late: nobody waits for it any more

        results: list[Any] = []
        scripted, _ = in_thread(kernel_side)
        with pytest.raises(Interrupted):
            first("s", "mine", {"m": 1})
        scripted.join(10)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert results[0][0]["structuredContent"]["echo"] == {"o": 1}
    kernel_next = in_thread(lambda: kernel.answer(kernel.next_call()))
    assert channel.call("s", "after", {"a": 2})["structuredContent"]["echo"] == {"a": 2}
    kernel_next[0].join(10)


def test_a_closed_channel_fails_every_waiting_caller_and_every_later_one(
    pair: tuple[Channel, Kernel],
) -> None:
    channel, kernel = pair
    callers = [in_thread(lambda n=n: channel.call("s", "t", {"n": n})) for n in range(5)]
    for _ in callers:
        kernel.next_call()
    kernel.sock.shutdown(socket.SHUT_WR)
    for thread, outcome in callers:
        thread.join(10)
        assert isinstance(outcome[0], ChannelClosed)
    with pytest.raises(ChannelClosed):
        channel.call("s", "t", {})
    assert channel.next_message() is None


def test_run_frames_reach_the_main_thread_between_calls(pair: tuple[Channel, Kernel]) -> None:
    channel, kernel = pair
    kernel.sock.sendall(encode_frame({"type": "run", "code": "1"}))  # type: ignore[typeddict-item]
    assert channel.next_message() == {"type": "run", "code": "1"}
    answering = in_thread(lambda: kernel.answer(kernel.next_call()))
    assert channel.call("s", "t", {"x": 1})["structuredContent"]["echo"] == {"x": 1}
    answering[0].join(10)
    os.write(kernel.sock.fileno(), encode_frame({"type": "run", "code": "2"}))  # type: ignore[typeddict-item]
    assert channel.next_message() == {"type": "run", "code": "2"}


# -- an interrupt at any point of the main thread's bookkeeping leaves somebody reading ----------------------


class Interrupted(Exception):
    """What the tests' SIGINT handler raises (the program's KeyboardInterrupt)."""


@pytest.fixture
def interrupts() -> Iterator[None]:
    """SIGINT raises ``Interrupted`` in the main thread for the test's length."""

    def interrupt(_signum: int, _frame: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGINT, interrupt)
    yield
    signal.signal(signal.SIGINT, previous)


def interrupt_main_thread_now() -> None:
    """A SIGINT that strikes the main thread here: its handler runs before this returns."""
    assert threading.get_ident() == threading.main_thread().ident
    signal.raise_signal(signal.SIGINT)


def answered_promptly(channel: Channel, kernel: Kernel, n: int) -> None:
    """A call after the interrupt is answered at once (were nobody left reading, it would wait for ever)."""
    answering = in_thread(lambda: kernel.answer(kernel.next_call()))
    caller, outcome = in_thread(lambda: channel.call("s", "after", {"n": n}))
    caller.join(5)
    assert outcome, "the call after the interrupt was never answered: nobody reads the socket"
    assert outcome[0]["structuredContent"]["echo"] == {"n": n}
    answering[0].join(5)


@pytest.mark.parametrize("stored", [False, True], ids=["before-leads-is-set", "after-leads-is-set"])
def test_an_interrupt_as_the_main_thread_takes_the_reading_leaves_none_stuck(
    pair: tuple[Channel, Kernel], interrupts: None, monkeypatch: pytest.MonkeyPatch, stored: bool
) -> None:
    """SIGINT in the instant the main thread becomes the reader: the reading is not lost with it."""
    channel, kernel = pair
    armed = [True]

    class StrikesWhenLeading(channel_module._Waiter):
        @property  # type: ignore[override]
        def leads(self) -> bool:
            return bool(self.__dict__.get("_leads", False))

        @leads.setter
        def leads(self, value: bool) -> None:
            strike = value and armed[0] and threading.get_ident() == threading.main_thread().ident
            if strike and not stored:
                armed[0] = False
                interrupt_main_thread_now()
            self.__dict__["_leads"] = value
            if strike and stored:
                armed[0] = False
                interrupt_main_thread_now()

    monkeypatch.setattr(channel_module, "_Waiter", StrikesWhenLeading)
    dropped = in_thread(kernel.next_call)  # the kernel gets the call; its answer finds nobody
    with pytest.raises(Interrupted):
        channel.call("s", "mine", {"m": 1})
    dropped[0].join(5)
    assert not armed[0]
    answered_promptly(channel, kernel, 2)


def test_an_interrupt_while_the_main_thread_hands_the_reading_on_leaves_none_stuck(
    pair: tuple[Channel, Kernel], interrupts: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT after the main thread took the next reader out of the line, before it woke it.

    The main thread reads its own answer while another thread waits for its own; it hands the reading to
    that thread, and the interrupt strikes in between. The thread still reads its answer, and the main
    thread's call raises the interrupt once the hand-over is done.
    """
    channel, kernel = pair
    armed = [True]

    class Wake:
        """A lock whose release by the main thread is struck by SIGINT just before it happens."""

        def __init__(self) -> None:
            self.lock = threading.Lock()

        def acquire(self) -> bool:
            return self.lock.acquire()

        def release(self) -> None:
            if armed[0] and threading.get_ident() == threading.main_thread().ident:
                armed[0] = False
                interrupt_main_thread_now()
            self.lock.release()

    class StruckWake(channel_module._Waiter):
        def __init__(self) -> None:
            super().__init__()
            self.wake = Wake()  # type: ignore[assignment]
            self.wake.acquire()

    monkeypatch.setattr(channel_module, "_Waiter", StruckWake)
    other: list[Any] = []

    def kernel_side() -> None:
        mine = kernel.next_call()
        other.extend(in_thread(lambda: channel.call("s", "other", {"o": 1})))
        theirs = kernel.next_call()
        deadline = time.monotonic() + 5
        while not channel._followers and time.monotonic() < deadline:  # the thread sleeps in line
            time.sleep(0.001)
        kernel.answer(mine)  # the main thread reads it, then hands the reading to the thread
        kernel.answer(theirs)

    scripted, _ = in_thread(kernel_side)
    with pytest.raises(Interrupted):
        channel.call("s", "mine", {"m": 1})
    scripted.join(5)
    assert not armed[0]
    other[0].join(5)
    assert other[1], "the thread handed the reading was never woken: nobody reads the socket"
    assert other[1][0]["structuredContent"]["echo"] == {"o": 1}
    answered_promptly(channel, kernel, 2)


def test_requests_a_run_left_unanswered_fail_when_the_next_run_begins(pair: tuple[Channel, Kernel]) -> None:
    """The kernel drops what a run leaves unanswered: a thread left waiting stops waiting, and reading.

    A thread the program left behind (a ``parallel`` whose main thread was interrupted) waits for an answer
    the kernel will never send, and reads the socket for everyone meanwhile. When the next run begins, its
    call and a future of that run fail with ChannelClosed; a call made after the run's ``done`` is answered.
    """
    channel, kernel = pair
    left = in_thread(lambda: channel.call("s", "left", {"l": 1}))
    kernel.next_call()  # never answered
    future = channel.submit("s", "async", {"a": 1})
    kernel.next_call()  # nor this one
    channel.send({"type": "done", "status": "ok", "value": None, "error": None})
    assert kernel.reader.read() == {"type": "done", "status": "ok", "value": None, "error": None}
    later = in_thread(lambda: channel.call("s", "later", {"n": 1}))  # between runs: for the next run
    made_later = kernel.next_call()
    kernel.sock.sendall(encode_frame({"type": "run", "code": "2"}))  # type: ignore[typeddict-item]
    assert channel.next_message() == {"type": "run", "code": "2"}
    left[0].join(5)
    assert left[1] and isinstance(left[1][0], ChannelClosed), left[1]
    assert "ended before the kernel answered" in str(left[1][0])
    with pytest.raises(ChannelClosed):
        future.result(5)
    kernel.answer(made_later)
    later[0].join(5)
    assert later[1][0]["structuredContent"]["echo"] == {"n": 1}
    assert not channel._reading  # nobody is left reading for an answer that cannot come
    answering = in_thread(lambda: kernel.answer(kernel.next_call()))
    assert channel.call("s", "t", {"x": 2})["structuredContent"]["echo"] == {"x": 2}
    answering[0].join(5)


def test_an_interrupted_wait_for_the_next_run_loses_no_run(
    pair: tuple[Channel, Kernel], interrupts: None
) -> None:
    """SIGINT while the main thread waits between runs: the run frame that comes next is kept for it."""
    channel, kernel = pair
    main = threading.get_ident()

    def kernel_side() -> None:
        time.sleep(0.05)  # the main thread waits in next_message
        signal.pthread_kill(main, signal.SIGINT)

    scripted, _ = in_thread(kernel_side)
    with pytest.raises(Interrupted):
        channel.next_message()
    scripted.join(5)
    kernel.sock.sendall(encode_frame({"type": "run", "code": "3"}))  # type: ignore[typeddict-item]
    assert channel.next_message() == {"type": "run", "code": "3"}
    answered_promptly(channel, kernel, 4)
