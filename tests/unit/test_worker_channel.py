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
