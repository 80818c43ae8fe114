"""A private asyncio event loop on a daemon thread, and the one way to run coroutines on it.

Jupyter runs user code on the main thread inside its own loop, where ``asyncio.run`` fails; the hub's
connections therefore live on a loop of their own. Waiting from the main thread is a blocking wait,
which a kernel interrupt or Ctrl-C (KeyboardInterrupt) can break: the coroutine is then cancelled on the
loop, and the wait goes on until it has ended, as ``asyncio.run`` does, so nothing keeps running behind
the user's back (a program's worker is stopped, and what it printed while stopping is shown, before the
interrupt reaches the caller). A second interrupt stops that wait.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

__all__ = ["LoopThread", "blocking"]

_CANCEL_WAIT_SECONDS = 75.0
"""The longest an interrupted wait waits for its cancelled coroutine to end: a worker stopped after the
longest grace period the config allows (60 s), with room to spare; a coroutine stuck longer is left."""

_WAKE_SECONDS = 0.1
"""How often a blocking wait wakes so that a pending interrupt gets in. The OS may deliver SIGINT to any
thread (one blocked reading the terminal, say); Python then only flags it, and a main thread asleep in a
lock would not see it until the wait ended (a Ctrl-C at a terminal question took the run's whole timeout)."""

T = TypeVar("T")
P = ParamSpec("P")
Owner = TypeVar("Owner")


class LoopThread:
    """Owns an event loop running forever on a daemon thread."""

    def __init__(self, name: str = "codemode-hub") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def in_loop_thread(self) -> bool:
        """True when called from the loop's own thread (where blocking on it would deadlock)."""
        return threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; returns a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and block until it ends; an interrupt cancels it there and waits."""
        if self.in_loop_thread():
            coro.close()
            raise RuntimeError("blocking call made from the hub's own event loop; use the async API instead")
        ended = threading.Event()
        future = self.submit(_signalling_end(coro, ended))
        try:
            if not _wait_awake(lambda seconds: bool(concurrent.futures.wait([future], seconds)[0]), timeout):
                raise TimeoutError
            return future.result()
        except BaseException:
            if future.cancel():  # it was still running: let its cleanup finish before the caller goes on
                _wait_awake(ended.wait, _CANCEL_WAIT_SECONDS)
            raise

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` running on the hub's loop from any other event loop."""
        if self.in_loop_thread():
            return await coro
        future = self.submit(coro)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    def stop(self) -> None:
        """Stop the loop and join its thread."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if not self.in_loop_thread():
            self._thread.join(timeout=10)
            if not self._thread.is_alive():
                self.loop.close()


def _wait_awake(wait: Callable[[float], bool], timeout: float | None) -> bool:
    """Call ``wait(seconds)`` (True once done) until done or ``timeout``; whether it is done.

    In slices of ``_WAKE_SECONDS``, so that an interrupt is raised here at once.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = _WAKE_SECONDS if deadline is None else min(_WAKE_SECONDS, deadline - time.monotonic())
        if left <= 0:
            return False
        if wait(left):
            return True


async def _signalling_end(coro: Coroutine[Any, Any, T], ended: threading.Event) -> T:
    """``coro``'s outcome; ``ended`` is set once it has ended, however (also after its cancellation).

    Its task's first step always runs before a cancellation reaches it (``run_coroutine_threadsafe``
    schedules that step first), so the ``finally`` runs even when the wait is broken at once.
    """
    try:
        return await coro
    finally:
        ended.set()


def blocking(
    method: Callable[Concatenate[Owner, P], Coroutine[Any, Any, T]], *, loop: Callable[[Owner], LoopThread]
) -> Callable[Concatenate[Owner, P], T]:
    """The blocking twin of an async method: run it on its owner's loop thread and wait for it.

    ``call = blocking(acall, loop=...)`` in a class body gives ``call`` the coroutine's signature and
    docstring, so the logic and the parameters are written once and the twin cannot drift (the way
    jupyter_client's ``run_sync`` pairs its managers' methods, for a loop of our own). The twin's name is
    the method's without its ``a`` (``acall`` -> ``call``). ``loop`` gives the owner's loop thread and is
    asked before the coroutine is made, so a refusal (not started) leaves no coroutine never awaited. As
    ``LoopThread.run`` does, an interrupt while waiting cancels the coroutine on the loop, and a call
    from the loop's own thread is refused.
    """

    @functools.wraps(method)
    def twin(owner: Owner, /, *args: P.args, **kwargs: P.kwargs) -> T:
        thread = loop(owner)
        return thread.run(method(owner, *args, **kwargs))

    name = method.__name__.removeprefix("a")
    owner_path, dot, _ = method.__qualname__.rpartition(".")
    twin.__name__, twin.__qualname__ = name, f"{owner_path}{dot}{name}"
    return twin
